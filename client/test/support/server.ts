/**
 * A scripted HTTP server on 127.0.0.1 and a random free port: each request gets the next scripted
 * reply (or the last one, once the script runs out), and every request is recorded as it arrived.
 * Tests speak real HTTP to the client, through the runtime's own fetch; nothing leaves the machine.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ShopCalls, type ShopCallsOptions } from '../../src';

export interface Recorded {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Reply =
  /** A header given as null is left out, the default `request-id` included. */
  | { status: number; json?: unknown; text?: string; headers?: Record<string, string | null>; delayMs?: number }
  /** The socket is closed once the request has arrived: the server may have acted on it. */
  | 'destroy'
  /** No answer at all, until the client gives up. */
  | 'hang'
  /** A 200 whose headers promise a body of which only the start ever comes. */
  | 'stall';

export type Script = readonly Reply[] | ((request: Recorded, index: number) => Reply);

export interface Scripted {
  baseUrl: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function scriptedServer(script: Script): Promise<Scripted> {
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      const index = requests.push(recorded) - 1;
      const reply =
        typeof script === 'function' ? script(recorded, index) : (script[index] ?? script[script.length - 1]);
      if (reply === undefined || reply === 'hang') return;
      if (reply === 'destroy') return void req.socket.destroy();
      if (reply === 'stall') return void res.writeHead(200, { 'content-length': '100' }).write('{"id":');
      const body = reply.text ?? (reply.json === undefined ? '' : JSON.stringify(reply.json));
      const all = { 'content-type': 'application/json', 'request-id': `req_${index}`, ...reply.headers };
      const headers = Object.fromEntries(
        Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== null),
      );
      const send = (): void => void res.writeHead(reply.status, headers).end(body);
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: connections to it are refused. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A client whose waits are recorded instead of slept, and whose jitter is a fixed 0.5. */
export function testClient(
  baseUrl: string,
  options: Partial<ShopCallsOptions> = {},
): { client: ShopCalls; sleeps: number[] } {
  const sleeps: number[] = [];
  const client = new ShopCalls({
    apiKey: 'sk_test_client',
    baseUrl,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    ...options,
  });
  return { client, sleeps };
}

/** The contract's error body. */
export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}) {
  return { error: { type: 'invalid_request_error', code, message, param: null, request_id: 'req_body', ...extra } };
}
