import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttemptResult } from './policy';
import { parseRetryAfter } from './policy';
import { addressProblem, type GuardPolicy } from './url-guard';

export interface SendResult extends AttemptResult {
  durationMs: number;
  /** At most the first 1 KiB of the response body, as text, for the delivery's attempt log. */
  snippet: string | null;
}

/** The contract's bound on `response_snippet` (API-CONTRACT.md: the first 1 KiB of the receiver's body). */
export const SNIPPET_BYTES = 1024;

/** The first `SNIPPET_BYTES` of a body as UTF-8 text; a character cut at the limit is dropped, not mangled. */
export function snippetOf(body: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(body.subarray(0, SNIPPET_BYTES), { stream: true });
}

/**
 * DNS lookup that refuses forbidden addresses. Installed on the agents, so the check runs
 * on the address actually connected to, at connect time (no rebinding window).
 */
export function guardedLookup(policy: GuardPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const bad = addresses.find((a) => addressProblem(a.address, policy));
      if (bad || addresses.length === 0) {
        const error = Object.assign(new Error(`refused target: ${hostname} resolves to ${bad?.address ?? 'nothing'}`), { code: 'EREFUSEDTARGET' });
        return callback(error, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

export interface Sender {
  post(url: URL, headers: Record<string, string>, body: string): Promise<SendResult>;
}

/** POSTs over keep-alive connections; never follows redirects; gives up at the timeout. */
export function httpSender(policy: GuardPolicy, timeoutMs: number): Sender {
  const lookup = guardedLookup(policy);
  const agents = {
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, lookup }),
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, lookup }),
  };
  return {
    post(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      return new Promise<SendResult>((resolve) => {
        const done = (r: Omit<SendResult, 'durationMs'>) => resolve({ ...r, durationMs: elapsed() });
        const client = url.protocol === 'https:' ? https : http;
        const req = client.request(url, {
          method: 'POST',
          agent: agents[url.protocol as 'https:' | 'http:'],
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          timeout: timeoutMs,
        });
        const deadline = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if (size < SNIPPET_BYTES) chunks.push(chunk);
            size += chunk.length;
          });
          res.on('end', () => {
            clearTimeout(deadline);
            const retryAfter = res.headers['retry-after'];
            done({
              status: res.statusCode ?? null,
              error: null,
              retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
              snippet: snippetOf(Buffer.concat(chunks)),
            });
          });
          res.on('error', () => undefined);
        });
        req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
        req.on('error', (err: NodeJS.ErrnoException) => {
          clearTimeout(deadline);
          const error = err.code === 'ETIMEDOUT' ? `timeout after ${timeoutMs} ms` : `${err.code ?? 'error'}: ${err.message}`.slice(0, 300);
          done({ status: null, error, retryAfterMs: null, snippet: null });
        });
        req.end(body);
      });
    },
  };
}
