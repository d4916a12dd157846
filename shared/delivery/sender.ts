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

/** The contract's bound on `response_snippet` (docs/api.md, Deliveries: the first 1 KiB of the receiver's body). */
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
        const error = Object.assign(new Error(`refused target: ${hostname} resolves to ${bad?.address ?? 'nothing'}`), {
          code: 'EREFUSEDTARGET',
        });
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

/**
 * The most of a response's status line and headers the sender parses; a larger head fails the
 * attempt. Set on each request so that a process-wide `--max-http-header-size` (the local stack
 * runs the API's server in the same process) never loosens it.
 */
export const RESPONSE_HEAD_BYTES = 16 * 1024;

const timeoutError = () => Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' });

function describeFailure(err: NodeJS.ErrnoException, timeoutMs: number): string {
  if (err.code === 'ETIMEDOUT') return `timeout after ${timeoutMs} ms`;
  if (err.code === 'HPE_HEADER_OVERFLOW') return `response headers over ${RESPONSE_HEAD_BYTES / 1024} KiB`;
  return `${err.code ?? 'error'}: ${err.message}`.slice(0, 300);
}

/** One request's outcome, and whether it failed on a pooled connection the receiver had already closed. */
interface Try {
  result: Omit<SendResult, 'durationMs'>;
  stale: boolean;
}

/**
 * A reused keep-alive connection that fails before any answer was most likely closed by the
 * receiver while idle (its keep-alive timeout crossed our request): the request is sent again on
 * a new connection, as Node's documentation advises. The receiver may have read the first before
 * it closed; a webhook may reach it twice, and receivers deduplicate on its `webhook-id`.
 */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE']);
/** Less time left than this and the first error stands: a new connection would only time out. */
const RESEND_MIN_MS = 100;

/**
 * POSTs over keep-alive connections; never follows redirects; gives up at the timeout, which
 * bounds the whole attempt, a resend on a new connection included. Of the answer it reads the
 * head and the snippet only: a receiver streaming an endless body would otherwise be read until
 * the timeout (gigabytes on a fast link).
 */
export function httpSender(policy: GuardPolicy, timeoutMs: number): Sender {
  const lookup = guardedLookup(policy);
  const pooled = {
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, lookup }),
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, lookup }),
  };
  const unpooled = { 'https:': new https.Agent({ lookup }), 'http:': new http.Agent({ lookup }) };
  const describe = (err: NodeJS.ErrnoException) => describeFailure(err, timeoutMs);
  return {
    async post(url, headers, body) {
      const started = performance.now();
      const protocol = url.protocol as 'https:' | 'http:';
      const request = { url, headers, body, describe };
      let sent = await sendOnce({ ...request, agent: pooled[protocol], timeoutMs });
      const left = timeoutMs - (performance.now() - started);
      if (sent.stale && left >= RESEND_MIN_MS)
        sent = await sendOnce({ ...request, agent: unpooled[protocol], timeoutMs: left });
      return { ...sent.result, durationMs: Math.round(performance.now() - started) };
    },
  };
}

interface OneRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  agent: http.Agent;
  timeoutMs: number;
  describe: (err: NodeJS.ErrnoException) => string;
}

/** One request on one connection of `agent`, given up at `timeoutMs`. */
function sendOnce({ url, headers, body, agent, timeoutMs, describe }: OneRequest): Promise<Try> {
  return new Promise<Try>((resolve) => {
    let settled = false;
    /** Set once the status line arrived: settles with the receiver's answer so far. */
    let answer: (() => void) | undefined;
    const settle = (result: Try['result'], stale = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ result, stale });
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      agent,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      timeout: timeoutMs,
      maxHeaderSize: RESPONSE_HEAD_BYTES,
    });
    const deadline = setTimeout(() => req.destroy(timeoutError()), timeoutMs);
    req.on('response', (res) => {
      const kept: Buffer[] = [];
      let size = 0;
      const answered = () => {
        const retryAfter = res.headers['retry-after'];
        settle({
          status: res.statusCode ?? null,
          error: null,
          retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
          snippet: snippetOf(Buffer.concat(kept)),
        });
      };
      answer = answered;
      res.on('data', (chunk: Buffer) => {
        if (size >= SNIPPET_BYTES) return;
        kept.push(chunk);
        size += chunk.length;
        if (size < SNIPPET_BYTES) return;
        answered();
        // Cut off at once, before the socket reads on: a half-read connection must never go back
        // to the pool. A body its length says is all here ends by itself and keeps the connection.
        const length = res.headers['content-length'];
        const whole = length !== undefined && size >= Number(length);
        if (!whole) req.destroy();
      });
      res.on('end', answered);
      // A body the receiver cut short is still its answer: the status arrived.
      res.on('close', answered);
      res.on('error', () => undefined);
    });
    req.on('timeout', () => req.destroy(timeoutError()));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // Closed or reset once its status arrived, the answer stands; stalled past the timeout, it does not.
      if (answer && err.code !== 'ETIMEDOUT') return answer();
      const stale = req.reusedSocket && !answer && STALE_CODES.has(err.code ?? '');
      settle({ status: null, error: describe(err), retryAfterMs: null, snippet: null }, stale);
    });
    req.end(body);
  });
}
