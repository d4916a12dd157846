import { clientErrorOf, rawResponse, REQUEST_HEAD_BYTES, targetUrl } from '../../lib/local/client-errors';
import { errorResult, withCommonHeaders } from '../../shared/http/response';
import { errorStatus } from '../../shared/http/errors';

describe("the local adapter's answers to requests the parser refuses", () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431, 'headers_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_INVALID_HEADER_TOKEN', 400, 'malformed_request'],
    ['HPE_INVALID_METHOD', 400, 'malformed_request'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 400, 'malformed_request'],
  ])('%s → %i %s', (code, status, contractCode) => {
    const err = clientErrorOf(Object.assign(new Error('Parse Error'), { code, reason: 'Invalid header value char' }));
    expect([errorStatus(err), err.code]).toEqual([status, contractCode]);
  });

  it('says what was wrong, and the size limit it enforces', () => {
    expect(
      clientErrorOf(
        Object.assign(new Error('x'), { code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header value char' }),
      ).message,
    ).toContain('Invalid header value char');
    expect(clientErrorOf(Object.assign(new Error('x'), { code: 'HPE_HEADER_OVERFLOW' })).message).toContain(
      `${REQUEST_HEAD_BYTES / 1024} KiB`,
    );
  });

  it('writes a framed HTTP/1.1 response that closes the connection', () => {
    const result = withCommonHeaders(
      errorResult(clientErrorOf(Object.assign(new Error('x'), { code: 'HPE_HEADER_OVERFLOW' })), 'req_abc'),
      'req_abc',
    );
    const raw = rawResponse(result);
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toContain('request-id: req_abc');
    expect(head).toContain('connection: close');
    expect(head).toContain(`content-length: ${Buffer.byteLength(body)}`);
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'headers_too_large', request_id: 'req_abc' } });
  });

  it.each([
    ['/v1/me?limit=2', '/v1/me'],
    ['//[', '//['],
    ['//evil.example/v1/me', '//evil.example/v1/me'],
    ['http://localhost:3000/v1/me', '/v1/me'],
    ['http://a:99999/v1/me', null],
    ['*', null],
    ['v1/me', null],
  ])('reads the target %s as the path %s', (target, path) => {
    expect(targetUrl(target)?.pathname ?? null).toBe(path);
  });
});
