import { derivedId, idTime, isId } from '../../shared/ids';
import { decide, MAX_ATTEMPTS, parseRetryAfter, RETRY_SCHEDULE_MS, shouldDisable } from '../../shared/delivery/policy';

const response = (status: number | null, retryAfterMs: number | null = null) => ({
  status,
  error: status === null ? 'timeout' : null,
  retryAfterMs,
});
const MIN = 60_000;

describe('delivery policy', () => {
  it('retries at 1m, 5m, 30m, 2h, 6h, 12h, 24h after the failed attempt: 8 attempts in all', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([1, 5, 30, 120, 360, 720, 1440].map((m) => m * MIN));
    expect(MAX_ATTEMPTS).toBe(8);
    const delays = Array.from({ length: 7 }, (_, i) => decide(i + 1, response(500)));
    expect(delays).toEqual(RETRY_SCHEDULE_MS.map((delayMs) => ({ kind: 'retry', delayMs })));
    expect(decide(8, response(500))).toEqual({ kind: 'failed' });
  });

  it.each([
    [200, { kind: 'succeeded' }],
    [204, { kind: 'succeeded' }],
    [299, { kind: 'succeeded' }],
    [301, { kind: 'retry', delayMs: MIN }],
    [302, { kind: 'retry', delayMs: MIN }],
    [400, { kind: 'retry', delayMs: MIN }],
    [404, { kind: 'retry', delayMs: MIN }],
    [410, { kind: 'gone' }],
    [500, { kind: 'retry', delayMs: MIN }],
    [null, { kind: 'retry', delayMs: MIN }],
  ])('status %s on attempt 1 → %j', (status, outcome) => {
    expect(decide(1, response(status))).toEqual(outcome);
  });

  it.each([
    ['lengthens the delay', 429, 90_000, 90_000],
    ['is capped at twice the scheduled delay', 503, 10 * MIN, 2 * MIN],
    ['never shortens the delay', 429, 10_000, MIN],
    ['is ignored on other statuses', 500, 90_000, MIN],
  ])('Retry-After %s (status %d, %d ms)', (_label, status, retryAfter, expected) => {
    expect(decide(1, response(status, retryAfter))).toEqual({ kind: 'retry', delayMs: expected });
  });

  it('scales every offset with TIME_SCALE', () => {
    expect(decide(3, response(500), 0.001)).toEqual({ kind: 'retry', delayMs: 1800 });
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:05:00 GMT', now)).toBe(300_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });

  it('disables after 3 days of failure with no success', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(shouldDisable(null, now)).toBe(false);
    expect(shouldDisable('2026-11-18T12:00:01Z', now)).toBe(false);
    expect(shouldDisable('2026-11-18T12:00:00Z', now)).toBe(true);
    expect(shouldDisable(new Date(now - 260).toISOString(), now, 0.000001)).toBe(true);
  });
});

describe('derived delivery ids', () => {
  it('are stable, well-formed, and carry the event time', () => {
    const t = Date.parse('2026-11-21T18:04:05.123Z');
    const a = derivedId('dlv', t, 'evt_1/we_1');
    expect(derivedId('dlv', t, 'evt_1/we_1')).toBe(a);
    expect(derivedId('dlv', t, 'evt_1/we_2')).not.toBe(a);
    expect(isId('dlv', a)).toBe(true);
    expect(idTime(a)).toBe(t);
  });
});
