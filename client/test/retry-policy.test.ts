import { type Attempted, DEFAULT_BACKOFF, neverSent, retryDelayMs, shouldRetry } from '../src/retry';

const answer = (status: number, headers: Record<string, string> = {}, code?: string): Attempted => ({
  kind: 'answer',
  status,
  headers: new Headers(headers),
  code,
});
/** What undici throws: a bare TypeError, with the system error as its cause. */
const fetchFailed = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: { code } });
const refused: Attempted = { kind: 'network', error: fetchFailed('ECONNREFUSED') };
const reset: Attempted = { kind: 'network', error: fetchFailed('ECONNRESET') };
const read = { method: 'GET', hasIdempotencyKey: false };
const keyed = { method: 'POST', hasIdempotencyKey: true };
const bare = { method: 'PATCH', hasIdempotencyKey: false };

describe('shouldRetry', () => {
  it.each([
    // what came back; whether to retry it for a read, a write with a key, a write without; the outcome
    ['408', true, true, false, answer(408)],
    ['429', true, true, true, answer(429)],
    ['500', true, true, false, answer(500)],
    ['502', true, true, false, answer(502)],
    ['503', true, true, false, answer(503)],
    ['504', true, true, false, answer(504)],
    ['501', false, false, false, answer(501)],
    ['400', false, false, false, answer(400)],
    ['404', false, false, false, answer(404)],
    ['409 idempotency_key_in_use', false, true, false, answer(409, {}, 'idempotency_key_in_use')],
    ['409 version_conflict', false, false, false, answer(409, {}, 'version_conflict')],
    ['200', false, false, false, answer(200)],
    ['a timeout', true, true, false, { kind: 'timeout' }],
    ['a connection refused', true, true, true, refused],
    ['a connection reset', true, true, false, reset],
  ] as const)('%s: read %s, write with key %s, write without %s', (_name, forRead, forKeyed, forBare, outcome) => {
    expect([shouldRetry(outcome, read), shouldRetry(outcome, keyed), shouldRetry(outcome, bare)]).toEqual([
      forRead,
      forKeyed,
      forBare,
    ]);
  });
});

describe('retryDelayMs', () => {
  it('draws uniformly below min(cap, base·2^n): full jitter', () => {
    const ceilings = [0, 1, 2, 3, 4, 5, 6].map((n) =>
      retryDelayMs(n, { kind: 'timeout' }, () => 0.99999, DEFAULT_BACKOFF),
    );
    expect(ceilings).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999]);
    expect(retryDelayMs(3, { kind: 'timeout' }, () => 0, DEFAULT_BACKOFF)).toBe(0);
  });

  it('takes Retry-After in seconds or as a date, cut to maxRetryAfterMs', () => {
    const random = () => 0.5;
    expect(retryDelayMs(0, answer(429, { 'retry-after': '2' }), random, DEFAULT_BACKOFF)).toBe(2000);
    expect(retryDelayMs(0, answer(503, { 'retry-after': '3600' }), random, DEFAULT_BACKOFF)).toBe(60_000);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const fromDate = retryDelayMs(0, answer(503, { 'retry-after': inTenSeconds }), random, DEFAULT_BACKOFF);
    expect(fromDate).toBeGreaterThan(8000);
    expect(fromDate).toBeLessThanOrEqual(10_000);
    expect(retryDelayMs(1, answer(503, { 'retry-after': 'soon' }), random, DEFAULT_BACKOFF)).toBe(500);
  });
});

describe('neverSent', () => {
  it('finds the system error under undici’s TypeError, and nothing else', () => {
    expect(neverSent(fetchFailed('ECONNREFUSED'))).toBe(true);
    expect(neverSent({ cause: { cause: { code: 'ENOTFOUND' } } })).toBe(true);
    expect(neverSent(fetchFailed('ECONNRESET'))).toBe(false);
    expect(neverSent(new TypeError('fetch failed'))).toBe(false);
    expect(neverSent(undefined)).toBe(false);
  });
});
