import type { AttemptRecord } from './records';
import type { DeliveryStatus } from './status';
import type { CIRCUIT_OPEN } from './attempt-plan';
import type { Resource } from '../domain/resources';

/**
 * An endpoint's health numbers (GET /v1/webhook-endpoints/{id}/stats) at a bounded cost:
 * each recorded attempt adds to the counters of its 10-minute bucket, held on the endpoint's
 * state item by the release that ends the attempt (no extra write) and moved to a bucket item
 * when the next bucket begins; a read sums the 145 buckets of the last 24 h (one query),
 * whatever the traffic. Latency percentiles come from a fixed histogram, so no attempt is ever listed.
 * See docs/capacity.md.
 */
export const STATS_WINDOW_HOURS = 24;
export const STATS_BUCKET_MS = 10 * 60 * 1000;
/** Counter items outlive the window they can appear in. */
export const STATS_RETENTION_SECONDS = 2 * 24 * 60 * 60;

/** An attempt held back by an open circuit is recorded, not sent: it counts for no rate or latency. */
const NOT_SENT: typeof CIRCUIT_OPEN = 'circuit_open';

/**
 * Upper bounds (ms) of the latency buckets: 1 ms growing by 25 % up to beyond the 10 s
 * timeout; a percentile is reported as its bucket's bound, at most 25 % above the truth.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = (() => {
  const bounds: number[] = [];
  for (let b = 1; b < 60_000; b = Math.max(b + 1, Math.round(b * 1.25))) bounds.push(b);
  bounds.push(60_000);
  return bounds;
})();

export function latencyBucket(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return i === -1 ? LATENCY_BOUNDS_MS.length - 1 : i;
}

/** What one attempt adds to its bucket; null when it adds nothing. */
export interface StatsIncrement {
  attempts: number;
  succeeded: number;
  failed: number;
  /** The delivery ended `failed` with this attempt. */
  deliveries_failed: number;
  /** Latency bucket of a sent attempt. */
  latency: number | null;
}

export function statsIncrement(entry: AttemptRecord, statusAfter: DeliveryStatus): StatsIncrement | null {
  const sent = entry.error !== NOT_SENT;
  const increment: StatsIncrement = {
    attempts: sent ? 1 : 0,
    succeeded: sent && statusAfter === 'succeeded' ? 1 : 0,
    failed: sent && statusAfter !== 'succeeded' ? 1 : 0,
    deliveries_failed: statusAfter === 'failed' ? 1 : 0,
    latency: sent ? latencyBucket(entry.duration_ms) : null,
  };
  return increment.attempts + increment.deliveries_failed > 0 ? increment : null;
}

/** Increments added up: the latency as a count per histogram bucket. */
export interface StatsSum {
  attempts: number;
  succeeded: number;
  failed: number;
  deliveries_failed: number;
  latency: Record<number, number>;
}

/**
 * What recorded attempts add to their endpoint's stats: one sum per 10-minute bucket they
 * fall in (usually one), so a run of attempts counts in one write per bucket.
 */
export function statsSums(
  attempts: readonly { entry: AttemptRecord; status: DeliveryStatus }[],
): { start: string; sum: StatsSum }[] {
  const sums = new Map<string, StatsSum>();
  for (const { entry, status } of attempts) {
    const inc = statsIncrement(entry, status);
    if (!inc) continue;
    const start = bucketStart(new Date(entry.at));
    const sum = sums.get(start) ?? { attempts: 0, succeeded: 0, failed: 0, deliveries_failed: 0, latency: {} };
    sum.attempts += inc.attempts;
    sum.succeeded += inc.succeeded;
    sum.failed += inc.failed;
    sum.deliveries_failed += inc.deliveries_failed;
    if (inc.latency !== null) sum.latency[inc.latency] = (sum.latency[inc.latency] ?? 0) + 1;
    sums.set(start, sum);
  }
  return [...sums].map(([start, sum]) => ({ start, sum }));
}

export const bucketStart = (at: Date): string =>
  new Date(Math.floor(at.getTime() / STATS_BUCKET_MS) * STATS_BUCKET_MS).toISOString();

/** The first bucket of the window ending now: the last 24 h, to a bucket. */
export const windowStart = (now: Date): string => bucketStart(new Date(now.getTime() - STATS_WINDOW_HOURS * 3_600_000));

/** One bucket's counters as stored; `latency[i]` counts attempts in bucket i. */
export interface StatsBucket {
  attempts: number;
  succeeded: number;
  failed: number;
  deliveries_failed: number;
  latency: Record<number, number>;
}

function percentile(histogram: number[], total: number, p: number): number | null {
  if (total === 0) return null;
  const rank = Math.ceil(p * total);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank) return LATENCY_BOUNDS_MS[i] ?? null;
  }
  return null;
}

export function summarise(
  endpointId: string,
  buckets: StatsBucket[],
  open: { pending: number; retrying: number },
): Resource<'webhookEndpointStats'> {
  const sum = (f: (b: StatsBucket) => number) => buckets.reduce((n, b) => n + f(b), 0);
  const attempts = sum((b) => b.attempts);
  const succeeded = sum((b) => b.succeeded);
  const histogram = LATENCY_BOUNDS_MS.map((_, i) => sum((b) => b.latency[i] ?? 0));
  const timed = histogram.reduce((n, c) => n + c, 0);
  return {
    object: 'webhook_endpoint_stats',
    endpoint_id: endpointId,
    window_hours: STATS_WINDOW_HOURS,
    attempts,
    succeeded,
    failed: sum((b) => b.failed),
    success_rate: attempts === 0 ? null : Math.round((succeeded / attempts) * 10_000) / 10_000,
    latency_ms: { p50: percentile(histogram, timed, 0.5), p95: percentile(histogram, timed, 0.95) },
    deliveries: { pending: open.pending, retrying: open.retrying, failed: sum((b) => b.deliveries_failed) },
  };
}
