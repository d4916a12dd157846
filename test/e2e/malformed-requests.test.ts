import { connect } from 'node:net';
import { startTestStack } from '../helpers/stack';

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent before it closed the connection. */
  raw: string;
}

/**
 * Sends bytes as they are (no client library would send these) and reads until the server
 * closes. The client does not half-close: node's server would then drop requests not yet answered.
 */
function sendRaw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error('the server neither answered nor closed within 5 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(bytes);
  });
}

function parse(raw: string): RawReply {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body, raw };
}

/** The contract's error: the status, the code, and a Request-Id header repeated in the body. */
function expectContractError(reply: RawReply, status: number, code: string): void {
  expect(reply.status).toBe(status);
  expect(reply.headers['request-id']).toMatch(/^req_[0-9a-z]{20,}$/i);
  expect(reply.headers['content-type']).toContain('application/json');
  const { error } = JSON.parse(reply.body) as {
    error: { type: string; code: string; message: string; request_id: string };
  };
  expect(error).toMatchObject({ type: 'invalid_request_error', code, request_id: reply.headers['request-id'] });
  expect(Buffer.byteLength(reply.body)).toBe(Number(reply.headers['content-length']));
}

describe('the local adapter and requests no HTTP client would send', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  let port: number;
  beforeAll(async () => {
    stack = await startTestStack();
    port = Number(new URL(stack.url).port);
  });
  afterAll(() => stack.stop());

  const stillAnswering = async () => {
    const me = await fetch(`${stack.url}/v1/me`, { headers: { authorization: `Bearer ${stack.demo.readKey.key}` } });
    expect(me.status).toBe(200);
  };

  it('GET //[ (a path no URL parser takes as a base-relative URL): 404 route_not_found, and the API keeps answering', async () => {
    expectContractError(
      parse(await sendRaw(port, 'GET //[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')),
      404,
      'route_not_found',
    );
    await stillAnswering();
  });

  it('GET http://a:99999/v1/me (an absolute target with a bad port): 400 malformed_request, and the API keeps answering', async () => {
    expectContractError(
      parse(await sendRaw(port, 'GET http://a:99999/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')),
      400,
      'malformed_request',
    );
    expectContractError(
      parse(await sendRaw(port, 'GET http://a:99999/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')),
      400,
      'malformed_request',
    );
    await stillAnswering();
  });

  it('a path that starts with // is a path, not a host: //evil/v1/me is not /v1/me', async () => {
    const reply = parse(
      await sendRaw(
        port,
        `GET //evil/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.demo.readKey.key}\r\nConnection: close\r\n\r\n`,
      ),
    );
    expectContractError(reply, 404, 'route_not_found');
  });

  it.each([
    ['a request line that is not HTTP', 400, 'malformed_request', 'HELLO THERE\r\n\r\n'],
    ['a NUL in a header value', 400, 'malformed_request', 'GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Note: a\0b\r\n\r\n'],
    ['a header name with a space', 400, 'malformed_request', 'GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n'],
    [
      '20 KB of headers',
      431,
      'headers_too_large',
      `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ],
  ])('%s: %d %s with a Request-Id, and the API keeps answering', async (_, status, code, bytes) => {
    const reply = parse(await sendRaw(port, bytes));
    expectContractError(reply, status, code);
    expect(reply.headers.connection).toBe('close');
    await stillAnswering();
  });

  it("garbage pipelined behind a request still being answered: that request's answer first, then the 400, then the connection closes", async () => {
    const raw = await sendRaw(
      port,
      `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.demo.readKey.key}\r\n\r\nGET /v1/me HTTP/1.1\r\nX-Note: a\0b\r\n\r\n`,
    );
    const second = raw.indexOf('HTTP/1.1 400');
    expect(second).toBeGreaterThan(0);
    const first = parse(raw.slice(0, second));
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ object: 'key_profile' });
    expectContractError(parse(raw.slice(second)), 400, 'malformed_request');
    await stillAnswering();
  });
});
