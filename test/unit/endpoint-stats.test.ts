import {
  LATENCY_BOUNDS_MS,
  bucketStart,
  latencyBucket,
  statsIncrement,
  summarise,
  windowStart,
  type StatsBucket,
} from '../../shared/delivery/endpoint-stats';
import type { AttemptRecord } from '../../shared/delivery/records';
import { snippetOf } from '../../shared/delivery/sender';

const attempt = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  attempt: 1,
  at: '2026-11-21T18:04:05.123Z',
  status: 200,
  duration_ms: 40,
  error: null,
  response_snippet: null,
  ...over,
});
const bucket = (over: Partial<StatsBucket> = {}): StatsBucket => ({
  attempts: 0,
  succeeded: 0,
  failed: 0,
  deliveries_failed: 0,
  latency: {},
  ...over,
});

describe('endpoint stats arithmetic', () => {
  it('latency buckets report a value at most 25 % above the true one, and cover the timeout', () => {
    for (let i = 1; i < LATENCY_BOUNDS_MS.length; i++) {
      const [lo, hi] = [LATENCY_BOUNDS_MS[i - 1] as number, LATENCY_BOUNDS_MS[i] as number];
      expect(hi).toBeGreaterThan(lo);
      // Durations are whole ms: the smallest value reported as `hi` is lo + 1.
      expect(hi / (lo + 1)).toBeLessThanOrEqual(1.25);
    }
    expect(LATENCY_BOUNDS_MS[latencyBucket(10_000)]).toBeGreaterThanOrEqual(10_000);
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(10 ** 9)).toBe(LATENCY_BOUNDS_MS.length - 1);
  });

  it.each([
    ['a success', attempt(), 'succeeded', { attempts: 1, succeeded: 1, failed: 0, deliveries_failed: 0 }],
    [
      'a failure to retry',
      attempt({ status: 500, error: 'HTTP 500' }),
      'retrying',
      { attempts: 1, succeeded: 0, failed: 1, deliveries_failed: 0 },
    ],
    [
      'a last failure',
      attempt({ attempt: 8, status: null, error: 'timeout after 10000 ms' }),
      'failed',
      { attempts: 1, succeeded: 0, failed: 1, deliveries_failed: 1 },
    ],
    [
      'a last attempt held back by the circuit',
      attempt({ attempt: 8, status: null, duration_ms: 0, error: 'circuit_open' }),
      'failed',
      { attempts: 0, succeeded: 0, failed: 0, deliveries_failed: 1, latency: null },
    ],
  ] as const)('counts %s', (_name, entry, status, expected) => {
    expect(statsIncrement(entry, status)).toMatchObject(expected);
  });

  it('adds nothing for an attempt held back by the circuit that leaves the delivery open', () => {
    expect(statsIncrement(attempt({ status: null, duration_ms: 0, error: 'circuit_open' }), 'retrying')).toBeNull();
  });

  it('sums the buckets: 3 successes and 1 failure are a rate of 0.75; percentiles are bucket bounds', () => {
    const fast = latencyBucket(20);
    const slow = latencyBucket(900);
    const stats = summarise(
      'we_01jd0000000000000000000000',
      [
        bucket({ attempts: 3, succeeded: 3, latency: { [fast]: 3 } }),
        bucket({ attempts: 1, failed: 1, deliveries_failed: 1, latency: { [slow]: 1 } }),
      ],
      { pending: 2, retrying: 1 },
    );
    expect(stats).toMatchObject({
      attempts: 4,
      succeeded: 3,
      failed: 1,
      success_rate: 0.75,
      deliveries: { pending: 2, retrying: 1, failed: 1 },
    });
    expect(stats.latency_ms).toEqual({ p50: 20, p95: LATENCY_BOUNDS_MS[slow] });
    expect(summarise('we_01jd0000000000000000000000', [], { pending: 0, retrying: 0 })).toMatchObject({
      success_rate: null,
      latency_ms: { p50: null, p95: null },
    });
  });

  it('buckets are 10 minutes; the window reaches back 24 h to a bucket', () => {
    expect(bucketStart(new Date('2026-11-21T18:04:05.123Z'))).toBe('2026-11-21T18:00:00.000Z');
    expect(windowStart(new Date('2026-11-21T18:14:05.123Z'))).toBe('2026-11-20T18:10:00.000Z');
  });
});

describe('response snippets', () => {
  it('keep at most 1 KiB, dropping a character the limit cuts', () => {
    expect(snippetOf(Buffer.from('a'.repeat(2000)))).toHaveLength(1024);
    expect(snippetOf(Buffer.from(`${'a'.repeat(1023)}€`))).toBe('a'.repeat(1023));
    expect(snippetOf(Buffer.from('déjà vu'))).toBe('déjà vu');
  });
});
