/**
 * One request, tried as often as the policy in retry.ts allows. openapi-fetch builds the Request and
 * hands it here as its `fetch`; each attempt sends a clone (a body is read once) under its own
 * timeout, and reads the whole answer before the timeout ends, so a server that stalls mid-body is
 * a timeout too. Only Web APIs (fetch, AbortController, setTimeout): Node 20+ and browsers alike.
 */
import { ConnectionError } from './errors.js';
import { type Attempted, type Backoff, retryDelayMs, shouldRetry } from './retry.js';

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface TransportConfig {
  fetch: (request: Request) => Promise<Response>;
  maxRetries: number;
  timeoutMs: number;
  backoff: Backoff;
  sleep: Sleep;
  random: () => number;
}

/** Per-call overrides, the last argument of every method. */
export interface RequestOptions {
  /** Ends the call (and its waits between retries) at once; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
}

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

// Statuses whose Response may not carry a body, even an empty one.
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

type Outcome = Exclude<Attempted, { kind: 'answer' }> | (Attempted & { kind: 'answer'; response: Response });

export async function send(request: Request, config: TransportConfig, options: RequestOptions = {}): Promise<Response> {
  const maxRetries = options.maxRetries ?? config.maxRetries;
  const timeoutMs = options.timeoutMs ?? config.timeoutMs;
  const traits = { method: request.method, hasIdempotencyKey: request.headers.has('idempotency-key') };
  for (let retry = 0; ; retry++) {
    const outcome = await attempt(request.clone(), config.fetch, timeoutMs, options.signal);
    if (retry < maxRetries && shouldRetry(outcome, traits)) {
      await config.sleep(retryDelayMs(retry, outcome, config.random, config.backoff), options.signal);
      continue;
    }
    if (outcome.kind === 'answer') return outcome.response;
    throw connectionError(outcome, request, timeoutMs, retry + 1);
  }
}

async function attempt(
  request: Request,
  fetchImpl: TransportConfig['fetch'],
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  if (signal?.aborted) throw signal.reason;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const answer = await untilAborted(
      fetchImpl(new Request(request, { signal: controller.signal })),
      controller.signal,
    );
    const body = NULL_BODY_STATUSES.has(answer.status)
      ? null
      : await untilAborted(answer.arrayBuffer(), controller.signal);
    const init = { status: answer.status, statusText: answer.statusText, headers: answer.headers };
    const response = new Response(body, init);
    const code = answer.status === 409 && body ? errorCode(body) : undefined;
    return { kind: 'answer', status: answer.status, headers: answer.headers, code, response };
  } catch (error) {
    // The caller's own abort is not a failure to retry: it ends the call as fetch would.
    if (signal?.aborted) throw signal.reason;
    return timedOut ? { kind: 'timeout' } : { kind: 'network', error };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Settles when `promise` does or `signal` aborts, whichever comes first: a fetch that misses the abort cannot hang. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function errorCode(body: ArrayBuffer): string | undefined {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? parsed.error.code : undefined;
  } catch {
    return undefined;
  }
}

function connectionError(outcome: Outcome, request: Request, timeoutMs: number, attempts: number): ConnectionError {
  const url = new URL(request.url);
  const target = `${request.method} ${url.origin}${url.pathname}`;
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  if (outcome.kind === 'timeout') {
    return new ConnectionError(`${target} timed out after ${timeoutMs} ms (${tries})`, { timedOut: true });
  }
  const cause = outcome.kind === 'network' ? outcome.error : undefined;
  return new ConnectionError(`${target} failed: ${describe(cause)} (${tries})`, { cause });
}

/**
 * undici's "fetch failed" says nothing by itself; its cause holds the system error. Read by shape,
 * not instanceof, since the error may come from another realm (a worker, a test sandbox).
 */
function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 3 && typeof current === 'object' && current !== null; depth++) {
    const { message, code, cause } = current as { message?: unknown; code?: unknown; cause?: unknown };
    if (typeof message !== 'string') break;
    parts.push(typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message);
    current = cause;
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}
