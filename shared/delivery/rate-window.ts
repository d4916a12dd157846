/**
 * The per-endpoint rate limit (`rate_limit`: at most N requests start in any one-second
 * window, bursts included) as pure functions over the request starts an endpoint's
 * admissions have counted. The starts are kept in 10 ms buckets on the endpoint's state item
 * and written by the admission itself, under the same optimistic condition as its leases,
 * so every consumer of the fleet counts every other's starts (docs/api.md, "Rate limit").
 *
 * Why not a token bucket or GCRA with burst tolerance: N at t = 0, then one more refilled at
 * 1/N s, is N + 1 starts in [0, 1). GCRA with no tolerance spaces starts 1/N apart, but
 * deliveries deferred together wake together (a queue delay is whole seconds in AWS) and
 * would then drain one per wake-up rather than N.
 */

/** Starts are counted in buckets of this width (ms): the window's precision. */
export const BUCKET_MS = 10;
export const WINDOW_MS = 1_000;
/**
 * An admitted request must start within this long of its admission (the admission's write,
 * the target's DNS check and the signing come in between), or it is not sent and waits
 * again. The window is widened by as much, which makes the bound hold for the times the
 * requests really start, not the times they were admitted.
 */
export const START_GRACE_MS = 100;
/** A start frees its place this long after its bucket began, at the latest. */
export const RATE_PERIOD_MS = WINDOW_MS + START_GRACE_MS + BUCKET_MS;
/** A delivery waiting for the rate wakes no later than this (under the queue's 15-minute delay: no schedule of its own), then looks again. */
export const MAX_RATE_WAIT_MS = 14 * 60_000;

/** Request starts by bucket (the bucket's index: epoch ms / BUCKET_MS, as a string key). */
export type RateStarts = Record<string, number>;

const bucketOf = (now: number) => Math.floor(now / BUCKET_MS);
/** When a bucket's starts stop counting: one window and the grace after the bucket's end. */
const freedAt = (bucket: number) => (bucket + 1) * BUCKET_MS + WINDOW_MS + START_GRACE_MS;

/**
 * The buckets that still count at `now`, oldest first: every start admitted in the last
 * window and grace (a few older ones too, by up to one bucket: never too few).
 */
export function counted(starts: RateStarts, now: number): [bucket: number, count: number][] {
  return Object.entries(starts)
    .map(([b, c]): [number, number] => [Number(b), c])
    .filter(([b, c]) => c > 0 && freedAt(b) > now)
    .sort((x, y) => x[0] - y[0]);
}

/** How many more requests may start now. */
export function rateAllowance(limit: number, starts: RateStarts, now: number): number {
  return Math.max(0, limit - counted(starts, now).reduce((n, [, c]) => n + c, 0));
}

/** The starts as written back: what no longer counts dropped (so at most ~111 buckets, whatever N), `n` added at `now`. */
export function withStarts(starts: RateStarts, now: number, n: number): RateStarts {
  const out: RateStarts = Object.fromEntries(counted(starts, now).map(([b, c]) => [String(b), c]));
  if (n > 0) out[String(bucketOf(now))] = (out[String(bucketOf(now))] ?? 0) + n;
  return out;
}

/**
 * When each of `count` waiting deliveries may next find room (epoch ms), in order: the
 * first N take the places the counted starts free, each later one the place of the one N
 * before it, a period on. Spread so, they wake in turn rather than all at once (which would
 * send all but N of them round the queue again, and again).
 */
export function rateWaits(limit: number, starts: RateStarts, now: number, count: number): number[] {
  const frees = counted(starts, now).flatMap(([b, c]) => Array<number>(c).fill(freedAt(b)));
  // Over the limit (it was lowered): the oldest starts free nothing usable until enough have left.
  const places = [
    ...Array<number>(Math.max(0, limit - frees.length)).fill(now),
    ...frees.slice(Math.max(0, frees.length - limit)),
  ];
  const times: number[] = [];
  for (let i = 0; i < count; i++)
    times.push(i < limit ? (places[i] as number) : (times[i - limit] as number) + RATE_PERIOD_MS);
  return times.map((t) => Math.min(t, now + MAX_RATE_WAIT_MS));
}

/** The endpoint's rate state as read: the starts counted, and the last place promised to a waiting delivery (epoch ms). */
interface RateState {
  starts: RateStarts;
  tail: number | null;
}

export interface RateDecision {
  /** Which of the deliveries the in-flight bound admitted may start. */
  send: string[];
  /** Waiting for the rate, with the time each may try again: no attempt used, no slot held. */
  waiting: { deliveryId: string; at: number }[];
  /** Still over the in-flight bound only (the rate had room): deferred as usual. */
  defer: string[];
  /** The starts to write with the admission; null when nothing starts (none to write). */
  starts: RateStarts | null;
  /** The new last place promised, when this admission promised places; else null (none to write). */
  tail: number | null;
}

/**
 * Applies the rate to what the in-flight bound admitted (`send`, in order) and deferred
 * (`defer`). Deliveries that waited for the rate already (`booked`: woken at the place they
 * were promised) go first; the others join the end of the line while there is one, so one
 * that just came never takes the place of one that waited. Whoever finds no room waits: a
 * booked one until the window next has room, a new one at the end of the line, a place
 * apart (one period / N) from the last. Spaced so, the waiting ones wake one at a time and
 * each finds its room, instead of all waking at every opening and all but N going round the
 * queue again; the price is a write of the line's end when a batch joins it.
 */
export function limitRate(
  limit: number,
  state: RateState,
  now: number,
  send: string[],
  defer: string[],
  booked: ReadonlySet<string>,
): RateDecision {
  const line = state.tail !== null && state.tail > now;
  const allowance = rateAllowance(limit, state.starts, now);
  const go = [...send.filter((id) => booked.has(id)), ...send.filter((id) => !booked.has(id) && !line)].slice(
    0,
    allowance,
  );
  const held = send.filter((id) => !go.includes(id));
  const starts = go.length > 0 ? withStarts(state.starts, now, go.length) : null;
  const binds = held.length > 0 || (defer.length > 0 && allowance <= go.length);
  // Over the in-flight bound but not the rate: deferred as usual, unless a line is to be joined.
  const over = [...held, ...defer.filter((id) => binds || (line && !booked.has(id)))];
  const rateWaiting = [...over.filter((id) => booked.has(id)), ...over.filter((id) => !booked.has(id))];
  const slotWaiting = defer.filter((id) => !rateWaiting.includes(id));
  const places = rateWaits(limit, starts ?? state.starts, now, rateWaiting.length);
  let tail = line ? (state.tail as number) : -Infinity;
  const joined = rateWaiting.filter((id) => !booked.has(id));
  const waiting = rateWaiting.map((deliveryId, i) => {
    if (booked.has(deliveryId)) return { deliveryId, at: places[i] as number };
    tail = Math.min(now + MAX_RATE_WAIT_MS, Math.max(places[i] as number, tail + RATE_PERIOD_MS / limit));
    return { deliveryId, at: tail };
  });
  return { send: go, waiting, defer: slotWaiting, starts, tail: joined.length > 0 ? tail : null };
}
