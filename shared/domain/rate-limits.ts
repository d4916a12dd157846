import type { KeyMode } from './api-keys';

/** Requests per second a bucket sustains, and how many it may take at once after an idle spell. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** The contract's limits (docs/api.md, Rate limits); a deployment may change them. */
export interface RateLimits {
  test: RateLimit;
  live: RateLimit;
  /** Failed authentications per source address, before the authorizer refuses outright. */
  authFailures: RateLimit;
}

export const limitOf = (perSecond: number, burstFactor: number): RateLimit => ({
  perSecond,
  burst: Math.max(1, Math.floor(perSecond * burstFactor)),
});

export const DEFAULT_RATE_LIMITS: RateLimits = {
  test: limitOf(25, 2),
  live: limitOf(100, 2),
  authFailures: limitOf(10, 2),
};

export const keyLimit = (limits: RateLimits, mode: KeyMode): RateLimit => limits[mode];

/** Milliseconds since the epoch, read when a judgement is made. */
export type Clock = () => number;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Takes one request from a bucket, atomically, for every process that shares the store.
 * `bucket` names whose budget it is (an API key, a source address).
 */
export interface RateLimiter {
  take(bucket: string, limit: RateLimit, clock: Clock): Promise<RateDecision>;
}

/**
 * GCRA (the generic cell rate algorithm, a token bucket kept as one number): a bucket's
 * state is its "theoretical arrival time" `tat`, when it would be empty again if requests
 * kept coming at the sustained rate. A request is allowed when, after adding its own
 * interval, `tat` stays within `burst` intervals of now; then `tat` moves one interval on.
 * One number means one conditional write per request, with no read-modify-write race.
 */
export function gcra(limit: RateLimit, nowMs: number) {
  const intervalMs = 1000 / limit.perSecond;
  /** The latest `tat` that still admits one more request now. */
  const ceiling = nowMs + (limit.burst - 1) * intervalMs;
  return {
    intervalMs,
    ceiling,
    /** `tat` of a bucket that was idle (or never used) after this request. */
    fresh: nowMs + intervalMs,
    /** When `tat` is past the ceiling: whole seconds until one request fits again (≥ 1, as Retry-After). */
    retryAfterSeconds: (tat: number) => Math.max(1, Math.ceil((tat - ceiling) / 1000)),
  };
}

/** The same algorithm over a plain map: for tests and single-process tools. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly tats = new Map<string, number>();

  take(bucket: string, limit: RateLimit, clock: Clock): Promise<RateDecision> {
    const nowMs = clock();
    const g = gcra(limit, nowMs);
    const tat = this.tats.get(bucket) ?? 0;
    if (tat > g.ceiling) return Promise.resolve({ allowed: false, retryAfterSeconds: g.retryAfterSeconds(tat) });
    this.tats.set(bucket, tat < nowMs ? g.fresh : tat + g.intervalMs);
    return Promise.resolve({ allowed: true });
  }
}

/** What the authorizer tells API Gateway: refuse outright (no route runs), or let the route answer. */
export type Admission = { refuse: true } | { refuse: false; retryAfterSeconds: number | null };

type AdmitDeps = { rateLimiter: RateLimiter; rateLimits: RateLimits };

/**
 * A key's bucket is named by the key's SHA-256 (one bucket per key, as its id would be), so it
 * is known before the key is looked up: the authorizer can take from it while the lookup runs.
 */
export const keyBucket = (keyHash: string) => `key#${keyHash}`;
/** Failed authentications take from a bucket of their source address. */
export const failureBucket = (sourceIp: string) => `ip#${sourceIp}`;

/**
 * A request with a valid key takes from the key's own bucket (one key's excess never limits
 * another): over it, the route answers 429.
 */
export async function admitKey(deps: AdmitDeps, keyHash: string, mode: KeyMode, clock: Clock): Promise<Admission> {
  const decision = await deps.rateLimiter.take(keyBucket(keyHash), keyLimit(deps.rateLimits, mode), clock);
  return { refuse: false, retryAfterSeconds: decision.allowed ? null : decision.retryAfterSeconds };
}

/**
 * A failed authentication takes from its source address's bucket; past that budget the
 * request is refused before any route runs: random keys cost an authorizer call each, not a
 * route call.
 */
export async function admitFailure(deps: AdmitDeps, sourceIp: string, clock: Clock): Promise<Admission> {
  const decision = await deps.rateLimiter.take(failureBucket(sourceIp), deps.rateLimits.authFailures, clock);
  return decision.allowed ? { refuse: false, retryAfterSeconds: null } : { refuse: true };
}
