/**
 * A stand-in AWS endpoint on a free loopback port: it records every request as it arrived
 * and answers from a queue of canned answers (else a default), so a test can send the same
 * call through the real SDK client and through shared/aws/aws-call.ts and compare what went
 * over the wire, and how each read the same answer.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256Js } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An answer: status, headers, body (after `delayMs`, if given); `hang` never answers; `reset` drops the connection; `stall` sends headers and never ends. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang' | 'reset' | 'stall';

export const REGION = 'eu-west-1';
export const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret-test', sessionToken: 'token-test' };
/** What an SDK client's resolved config offers as region and credentials. */
export const identity = { region: () => Promise.resolve(REGION), credentials: () => Promise.resolve(credentials) };
/** SDK client options aimed at a stand-in endpoint: the same identity, one attempt unless a test says otherwise. */
export const sdkOptions = (endpoint: string, maxAttempts = 1) => ({ endpoint, region: REGION, credentials, maxAttempts });
export const noPause = () => Promise.resolve();

export interface AwsWire {
  endpoint: string;
  seen: Seen[];
  /** Answers for the next requests, in order; then `fallback`. */
  answers: Answer[];
  fallback: (req: Seen) => Answer;
  reset(): void;
  stop(): Promise<void>;
}

export async function startAwsWire(fallback: (req: Seen) => Answer = () => ({ status: 200, body: '{}' })): Promise<AwsWire> {
  const hanging = new Set<ServerResponse>();
  const wire: AwsWire = {
    endpoint: '',
    seen: [],
    answers: [],
    fallback,
    reset() {
      wire.seen = [];
      wire.answers = [];
    },
    stop: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      wire.seen.push(seen);
      const answer = wire.answers.shift() ?? wire.fallback(seen);
      if (answer === 'hang') return void hanging.add(res);
      if (answer === 'reset') return void req.socket.destroy();
      if (answer === 'stall') {
        hanging.add(res);
        return void res.writeHead(200, { 'content-type': 'application/json' }).write('{"Partial":');
      }
      const respond = () => void res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '{}');
      if (answer.delayMs === undefined) return respond();
      hanging.add(res);
      setTimeout(() => {
        hanging.delete(res);
        if (!res.destroyed) respond();
      }, answer.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  wire.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return wire;
}

/**
 * Recomputes a request's SigV4 signature from what arrived (the headers it says it signed,
 * its time, path and body) with the SDK's signer: equal only if the body sent is the body
 * signed, for this service and region, with these credentials.
 */
export async function expectValidSignature(req: Seen, service: string): Promise<void> {
  const auth = String(req.headers.authorization);
  const declared = req.headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== createHash('sha256').update(req.body).digest('hex')) throw new Error('x-amz-content-sha256 is not the body\'s hash');
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
  const amzDate = String(req.headers['x-amz-date']);
  const headers = Object.fromEntries(signedHeaders.filter((h) => h !== 'x-amz-date' && h !== 'x-amz-security-token').map((h) => [h, String(req.headers[h])]));
  const host = String(req.headers.host);
  const [hostname, port] = host.split(':');
  const reference = await new SignatureV4({ service, region: REGION, credentials, sha256: Sha256Js, uriEscapePath: true }).sign(
    { method: req.method, protocol: 'http:', hostname: hostname as string, port: Number(port), path: req.url, query: {}, headers, body: req.body },
    { signingDate: new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`) },
  );
  if (reference.headers.authorization !== auth) throw new Error(`signature does not verify:\n sent     ${auth}\n expected ${reference.headers.authorization}`);
  if (!auth.includes(`/${REGION}/${service}/aws4_request`)) throw new Error(`signed for another scope: ${auth}`);
  if (req.headers['x-amz-security-token'] !== credentials.sessionToken) throw new Error('no session token');
}

/** What two requests must share to be the same call: method, path, target, content type, JSON body (minus `ignore`d fields). */
export function callOf(req: Seen, ignore: string[] = []) {
  const body = JSON.parse(req.body || '{}') as Record<string, unknown>;
  for (const field of ignore) delete body[field];
  return {
    method: req.method,
    path: req.url,
    target: req.headers['x-amz-target'],
    contentType: req.headers['content-type'],
    queryMode: req.headers['x-amzn-query-mode'],
    body,
  };
}
