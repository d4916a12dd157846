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
 * An admitted request must start within its grace of its admission (the admission's write,
 * the target's DNS check and the signing come in between), or it is not sent and waits
 * again. Each start counts for one window and its own grace, which makes the bound hold for
 * the times the requests really start, not the times they were admitted.
 */
export const START_GRACE_MS = 100;
/**
 * The longest grace a delivery asks for. One that missed its grace asks next time for twice
 * the time it took (a slow table, a busy process): it then gets out, at the price of its start
 * counting that much longer, rather than missing again and again. Its lease grows by as much
 * (../send-attempt.ts, `leaseMs`), so a request started late in its grace still ends, and is
 * recorded, inside the lease.
 */
export const MAX_START_GRACE_MS = 10_000;
/** A start with the usual grace frees its place this long after its bucket began, at the latest. */
export const RATE_PERIOD_MS = WINDOW_MS + START_GRACE_MS + BUCKET_MS;
/**
 * A delivery waiting for the rate wakes no later than this (under the queue's 15-minute delay: no
 * schedule of its own), then looks again.
 */
export const MAX_RATE_WAIT_MS = 14 * 60_000;

/**
 * Request starts by bucket: the key is the bucket's index (epoch ms / BUCKET_MS), with
 * `+<grace ms>` after it for starts admitted with more than the usual grace.
 */
export type RateStarts = Record<string, number>;

interface Counted {
  key: string;
  count: number;
  /** When its starts stop counting: one window and their grace after the bucket's end. */
  freedAt: number;
}

const bucketOf = (now: number) => Math.floor(now / BUCKET_MS);
const keyOf = (bucket: number, grace: number) => (grace === START_GRACE_MS ? String(bucket) : `${bucket}+${grace}`);

function parse(key: string, count: number): Counted {
  const [bucket, grace] = key.split('+');
  return { key, count, freedAt: (Number(bucket) + 1) * BUCKET_MS + WINDOW_MS + Number(grace ?? START_GRACE_MS) };
}

/**
 * The starts that still count at `now`, the first to be freed first: every start admitted in
 * the last window and its grace (a few older ones too, by up to one bucket: never too few).
 */
export function counted(starts: RateStarts, now: number): Counted[] {
  return Object.entries(starts)
    .map(([key, count]) => parse(key, count))
    .filter((c) => c.count > 0 && c.freedAt > now)
    .sort((x, y) => x.freedAt - y.freedAt);
}

/** How many more requests may start now. */
export function rateAllowance(limit: number, starts: RateStarts, now: number): number {
  return Math.max(0, limit - counted(starts, now).reduce((n, c) => n + c.count, 0));
}

/**
 * The starts as written back: what no longer counts dropped (so at most ~111 buckets, whatever N),
 * `n` added at `now` with their grace.
 */
export function withStarts(starts: RateStarts, now: number, n: number, grace = START_GRACE_MS): RateStarts {
  const out: RateStarts = Object.fromEntries(counted(starts, now).map((c) => [c.key, c.count]));
  const key = keyOf(bucketOf(now), grace);
  if (n > 0) out[key] = (out[key] ?? 0) + n;
  return out;
}

/** Whether a change of `rate_limit` from `before` to `after` lets more requests start (./rate-raise.ts). */
export const raisesRate = (before: number | null | undefined, after: number | null): boolean =>
  before !== null && before !== undefined && (after === null || after > before);

/**
 * The grace to ask for after missing one: twice the time the last admission took to start, in whole
 * buckets, within bounds.
 */
export function graceAfterLate(tookMs: number): number {
  const doubled = Math.ceil((2 * tookMs) / BUCKET_MS) * BUCKET_MS;
  return Math.min(MAX_START_GRACE_MS, Math.max(START_GRACE_MS, doubled));
}

/**
 * When each of `count` waiting deliveries may next find room (epoch ms), in order: the
 * first N take the places the counted starts free, each later one the place of the one N
 * before it, a period on. Spread so, they wake in turn rather than all at once (which would
 * send all but N of them round the queue again, and again).
 */
export function rateWaits(limit: number, starts: RateStarts, now: number, count: number): number[] {
  const frees = counted(starts, now).flatMap((c) => Array<number>(c.count).fill(c.freedAt));
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

/**
 * The endpoint's rate state as read: the starts counted, and the last place promised to a waiting
 * delivery (epoch ms).
 */
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
 * One admission's deliveries: what the in-flight bound admitted (in order) and deferred, and which
 * of them waited for the rate already.
 */
export interface RateBatch {
  send: string[];
  defer: string[];
  booked: ReadonlySet<string>;
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
  { send, defer, booked }: RateBatch,
  grace = START_GRACE_MS,
): RateDecision {
  const line = state.tail !== null && state.tail > now;
  const allowance = rateAllowance(limit, state.starts, now);
  const go = [...send.filter((id) => booked.has(id)), ...send.filter((id) => !booked.has(id) && !line)].slice(
    0,
    allowance,
  );
  const heldBack = send.filter((id) => !go.includes(id));
  const starts = go.length > 0 ? withStarts(state.starts, now, go.length, grace) : null;
  const binds = heldBack.length > 0 || (defer.length > 0 && allowance <= go.length);
  // Over the in-flight bound but not the rate: deferred as usual, unless a line is to be joined.
  const over = [...heldBack, ...defer.filter((id) => binds || (line && !booked.has(id)))];
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
