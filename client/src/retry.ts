/**
 * When to try a request again, and how long to wait first: pure functions, so the policy is tested
 * as a table and the transport only carries it out.
 *
 * A request is *safe to repeat* when it is a read, or a write that carries an Idempotency-Key (the
 * service replays the first answer instead of acting twice). A write without a key is repeated only
 * when it provably never reached an operation: the connection was refused, or the answer is a 429
 * (the rate limit is checked before any operation runs: docs/api.md, Rate limits).
 */
import { retryAfterSeconds } from './errors.js';

export interface Backoff {
  /** The first retry waits up to this long; each further one doubles it, up to capMs. */
  baseMs: number;
  capMs: number;
  /** A Retry-After longer than this is cut to it, so one answer cannot park a caller for an hour. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 500, capMs: 8000, maxRetryAfterMs: 60_000 };

const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** Failures of `fetch` that mean no byte of the request left: the server cannot have acted on it. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

export type Attempted =
  | { kind: 'answer'; status: number; headers: Headers; code: string | undefined }
  | { kind: 'timeout' }
  | { kind: 'network'; error: unknown };

export interface RequestTraits {
  method: string;
  hasIdempotencyKey: boolean;
}

export const isRead = (method: string): boolean => method === 'GET' || method === 'HEAD';

export function safeToRepeat({ method, hasIdempotencyKey }: RequestTraits): boolean {
  return isRead(method) || hasIdempotencyKey;
}

/** Whether this outcome of one attempt deserves another attempt (the caller checks the count). */
export function shouldRetry(outcome: Attempted, traits: RequestTraits): boolean {
  const safe = safeToRepeat(traits);
  switch (outcome.kind) {
    case 'timeout':
      return safe;
    case 'network':
      return safe || neverSent(outcome.error);
    case 'answer':
      if (outcome.status === 429) return true;
      // The service's own answer to a retry that overtook the first attempt still running under this key.
      if (outcome.status === 409) return traits.hasIdempotencyKey && outcome.code === 'idempotency_key_in_use';
      return safe && RETRY_STATUSES.has(outcome.status);
  }
}

/**
 * Full jitter (AWS's "Exponential Backoff and Jitter"): a uniform wait in [0, min(cap, base·2^n)),
 * so many clients failing together spread out instead of retrying in lockstep. A Retry-After on the
 * answer wins, within maxRetryAfterMs.
 */
export function retryDelayMs(retryIndex: number, outcome: Attempted, random: () => number, backoff: Backoff): number {
  if (outcome.kind === 'answer') {
    const seconds = retryAfterSeconds(outcome.headers.get('retry-after'));
    if (seconds !== null) return Math.min(seconds * 1000, backoff.maxRetryAfterMs);
  }
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** retryIndex);
  return Math.floor(random() * ceiling);
}

/** Walks `cause` links: undici puts the system error (with its `code`) under a generic TypeError. */
export function neverSent(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_SENT_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
