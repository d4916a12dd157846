import {
  admit,
  HEALTHY,
  MAX_IN_FLIGHT,
  type EndpointGate,
  type EndpointHealth,
  type LeaseTerms,
} from '../../shared/delivery/circuit';
import {
  BUCKET_MS,
  counted,
  limitRate,
  MAX_RATE_WAIT_MS,
  RATE_PERIOD_MS,
  rateAllowance,
  rateWaits,
  START_GRACE_MS,
  WINDOW_MS,
  withStarts,
  graceAfterLate,
  MAX_START_GRACE_MS,
  raisesRate,
  type RateStarts,
} from '../../shared/delivery/rate-window';

const NONE = new Set<string>();
const state = (starts: RateStarts = {}, tail: number | null = null) => ({ starts, tail });

// A bucket boundary: 10 ms buckets start at multiples of 10 of the epoch.
const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const LEASE_MS = 15_000;
let n = 0;
const token = () => `t${++n}`;
/** Admissions at T0, with leases of LEASE_MS. */
const TERMS: LeaseTerms = { now: T0, leaseMs: LEASE_MS, token };
const ids = (count: number, prefix = 'dlv') => Array.from({ length: count }, (_, i) => `${prefix}_${i}`);
/** When starts counted in the bucket of `t` stop counting. */
const freed = (t: number) => Math.floor(t / BUCKET_MS) * BUCKET_MS + BUCKET_MS + WINDOW_MS + START_GRACE_MS;
const gate = (
  rate_limit: number | null,
  rate_starts: RateStarts = {},
  health: Partial<EndpointHealth> = {},
): EndpointGate => ({
  health: { ...HEALTHY, ...health },
  leases: {},
  lease_version: 1,
  rate_limit,
  rate_starts,
});

describe('the rate window (pure)', () => {
  it('counts a start until one window and the grace after its bucket ends, to the millisecond', () => {
    const starts = withStarts({}, T0 + 3, 2);
    expect(starts).toEqual({ [String(T0 / BUCKET_MS)]: 2 });
    expect(rateAllowance(2, starts, T0 + 3)).toBe(0);
    expect(rateAllowance(2, starts, freed(T0) - 1)).toBe(0);
    expect(rateAllowance(2, starts, freed(T0))).toBe(2);
    expect(rateAllowance(3, starts, T0 + WINDOW_MS)).toBe(1);
  });

  it('at the 10 ms edges: the last millisecond of a bucket and the first of the next are buckets of their own', () => {
    let starts = withStarts({}, T0 + 9, 1);
    starts = withStarts(starts, T0 + 10, 1);
    expect(counted(starts, T0 + 10).map((c) => [c.key, c.count])).toEqual([
      [String(T0 / BUCKET_MS), 1],
      [String(T0 / BUCKET_MS + 1), 1],
    ]);
    // The first bucket leaves first, exactly when its end is a window and the grace old.
    expect(rateAllowance(2, starts, T0 + 10 + WINDOW_MS + START_GRACE_MS - 1)).toBe(0);
    expect(rateAllowance(2, starts, T0 + 10 + WINDOW_MS + START_GRACE_MS)).toBe(1);
    expect(rateAllowance(2, starts, T0 + 20 + WINDOW_MS + START_GRACE_MS)).toBe(2);
  });

  it('N = 1: one start, then none until it has left the window', () => {
    const first = limitRate(1, state(), T0, { send: ['a', 'b'], defer: [], booked: NONE });
    expect(first).toMatchObject({
      send: ['a'],
      defer: [],
      waiting: [{ deliveryId: 'b', at: freed(T0) }],
      tail: freed(T0),
    });
    const after = state(first.starts ?? {}, first.tail);
    expect(limitRate(1, after, T0 + WINDOW_MS, { send: ['b'], defer: [], booked: new Set(['b']) })).toMatchObject({
      send: [],
      starts: null,
    });
    expect(limitRate(1, after, freed(T0), { send: ['b'], defer: [], booked: new Set(['b']) }).send).toEqual(['b']);
  });

  it('N = 1000: a thousand starts in one window, the next one waits; the stored map stays small', () => {
    let starts: RateStarts = {};
    // 1000 starts spread over 900 ms, as 4 at a time would come.
    for (let i = 0; i < 250; i++)
      starts =
        limitRate(1000, state(starts), T0 + i * 3.6, { send: ['a', 'b', 'c', 'd'], defer: [], booked: NONE }).starts ??
        starts;
    expect(rateAllowance(1000, starts, T0 + 950)).toBe(0);
    expect(Object.keys(starts).length).toBeLessThanOrEqual((WINDOW_MS + START_GRACE_MS) / BUCKET_MS + 1);
    const over = limitRate(1000, state(starts), T0 + 950, { send: ['x'], defer: [], booked: NONE });
    expect(over.send).toEqual([]);
    expect(over.waiting[0]?.at).toBe(freed(T0));
  });

  it('a batch of 10 against N = 2: 2 go now, 8 wait in line, half a period apart (no slot held, no backoff)', () => {
    const a = admit(gate(2), ids(10), TERMS);
    expect(a.send.map((s) => s.deliveryId)).toEqual(ids(2));
    expect(a.defer).toEqual([]);
    expect(a.rateLimited?.map((w) => w.deliveryId)).toEqual(ids(10).slice(2));
    expect(a.rateLimited?.map((w) => w.at - freed(T0))).toEqual(
      [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5].map((k) => k * RATE_PERIOD_MS),
    );
    expect(a.rateStarts).toEqual({ [String(T0 / BUCKET_MS)]: 2 });
    expect(a.rateTail).toBe(freed(T0) + 3.5 * RATE_PERIOD_MS);
  });

  it('a line: who waited goes first, who comes while others wait joins its end even when the window has room', () => {
    const tail = T0 + 2 * RATE_PERIOD_MS;
    const fresh = admit(gate(2, {}, {}), ['new'], TERMS);
    expect(fresh.send).toHaveLength(1);
    const waiting = admit({ ...gate(2), rate_tail: tail }, ['new'], TERMS);
    expect(waiting.send).toEqual([]);
    expect(waiting.rateLimited).toEqual([{ deliveryId: 'new', at: tail + RATE_PERIOD_MS / 2 }]);
    expect(waiting.rateTail).toBe(tail + RATE_PERIOD_MS / 2);
    // Woken at its place: it goes, and one just come waits behind the line.
    const both = admit({ ...gate(2), rate_tail: tail }, ['new', 'old'], TERMS, {
      booked: new Set(['old']),
    });
    expect(both.send.map((s) => s.deliveryId)).toEqual(['old']);
    expect(both.rateLimited?.map((w) => w.deliveryId)).toEqual(['new']);
    // One that waited and still finds no room (the one before it started late) waits for the window only: the line's
    // end stays.
    const full = withStarts({}, T0 - 200, 2);
    const again = admit({ ...gate(2, full), rate_tail: tail }, ['old'], TERMS, {
      booked: new Set(['old']),
    });
    expect(again.rateLimited).toEqual([{ deliveryId: 'old', at: freed(T0 - 200) }]);
    expect(again.rateTail).toBeNull();
  });

  it('beneath the in-flight bound: when the rate has room, the rest wait for a slot as before', () => {
    const a = admit(gate(100), ids(10), TERMS);
    expect(a.send).toHaveLength(MAX_IN_FLIGHT);
    expect(a.defer).toEqual(ids(10).slice(MAX_IN_FLIGHT));
    expect(a.rateLimited).toEqual([]);
    // The rate binds exactly at the slots: the rest wait for the rate, not for a slot.
    const exact = admit(gate(MAX_IN_FLIGHT), ids(6), TERMS);
    expect(exact.send).toHaveLength(MAX_IN_FLIGHT);
    expect(exact.defer).toEqual([]);
    expect(exact.rateLimited?.map((w) => w.deliveryId)).toEqual(ids(6).slice(MAX_IN_FLIGHT));
    // No rate limit: nothing of the rate in the admission.
    const plain = admit(gate(null), ids(6), TERMS);
    expect([plain.send.length, plain.rateLimited, plain.rateStarts]).toEqual([MAX_IN_FLIGHT, undefined, undefined]);
  });

  it('a probe the rate has no room for waits, and the circuit stays open', () => {
    const open = {
      circuit: 'open' as const,
      consecutive_failures: 5,
      next_probe_at: new Date(T0 - 1).toISOString(),
      probe_interval_ms: 15_000,
    };
    const full = withStarts({}, T0 - 100, 1);
    const a = admit(gate(1, full, open), ids(3), TERMS);
    expect(a.send).toEqual([]);
    expect(a.health.circuit).toBe('open');
    expect(a.rateLimited?.map((w) => w.deliveryId)).toEqual(['dlv_0']);
    expect(a.circuitOpen).toEqual(['dlv_1', 'dlv_2']);
    const room = admit(gate(1, {}, open), ids(1), TERMS);
    expect(room.send[0]?.lease.probe).toBe(true);
    expect(room.health.circuit).toBe('half_open');
  });

  it('prunes what no longer counts on every write, and a lowered limit waits for enough starts to leave', () => {
    const old = withStarts(withStarts({}, T0, 3), T0 + 500, 2);
    const later = withStarts(old, freed(T0), 1);
    expect(counted(later, freed(T0)).map((c) => c.count)).toEqual([2, 1]);
    expect(Object.keys(later)).toHaveLength(2);
    // 5 counted against a limit lowered to 2: the third place frees with the fourth start.
    expect(rateWaits(2, old, T0 + 600, 3)).toEqual([
      freed(T0 + 500),
      freed(T0 + 500),
      freed(T0 + 500) + RATE_PERIOD_MS,
    ]);
    // A long backlog wakes no later than the cap, then looks again.
    expect(Math.max(...rateWaits(1, old, T0, 10_000))).toBe(T0 + MAX_RATE_WAIT_MS);
  });

  it("a race lost: the consumer that re-reads the winner's write finds no room", () => {
    const read = gate(2);
    const winner = admit(read, ['a', 'b'], TERMS);
    const loser = admit(read, ['c', 'd'], { ...TERMS, now: T0 + 1 });
    expect(loser.send).toHaveLength(2); // on the stale read: its write is refused by the version (integration test)
    const reread: EndpointGate = { ...read, lease_version: 2, rate_starts: winner.rateStarts ?? {} };
    const again = admit(reread, ['c', 'd'], { ...TERMS, now: T0 + 5 });
    expect(again.send).toEqual([]);
    expect(again.rateLimited?.map((w) => w.at)).toEqual([freed(T0), freed(T0) + RATE_PERIOD_MS / 2]);
  });

  it('a start admitted with a longer grace counts for that much longer, and leaves in its turn', () => {
    const starts = withStarts(withStarts({}, T0, 1, 600), T0 + 20, 1);
    expect(starts).toEqual({ [`${T0 / BUCKET_MS}+600`]: 1, [String(T0 / BUCKET_MS + 2)]: 1 });
    // The usual one (admitted later) leaves first; the long one 500 ms after its usual time.
    expect(counted(starts, T0 + 20).map((c) => c.freedAt)).toEqual([freed(T0 + 20), freed(T0) + 500]);
    expect(rateAllowance(2, starts, freed(T0 + 20))).toBe(1);
    expect(rateAllowance(2, starts, freed(T0) + 499)).toBe(1);
    expect(rateAllowance(2, starts, freed(T0) + 500)).toBe(2);
    // Written back, each keeps its own grace.
    expect(withStarts(starts, T0 + 30, 1)).toEqual({ ...starts, [String(T0 / BUCKET_MS + 3)]: 1 });
  });

  it('after a missed start, a delivery asks for twice the time it took, in whole buckets, within bounds', () => {
    expect(graceAfterLate(101)).toBe(210);
    expect(graceAfterLate(30)).toBe(START_GRACE_MS);
    expect(graceAfterLate(60_000)).toBe(MAX_START_GRACE_MS);
  });

  it.each([1, 3, 20])(
    'graces from 100 ms to 10 s, each start anywhere in its own: never more than %i in any one-second window',
    (limit) => {
      let seed = limit + 7;
      const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      let rate = state();
      const begun: number[] = [];
      let waiting = Array.from({ length: limit * 8 }, () => T0 + random() * 3000);
      while (waiting.length > 0) {
        waiting.sort((x, y) => x - y);
        const now = waiting[0] as number;
        const batch = waiting.slice(0, 1 + Math.floor(random() * 4));
        waiting = waiting.slice(batch.length);
        const grace = random() < 0.5 ? START_GRACE_MS : graceAfterLate(random() * MAX_START_GRACE_MS);
        const names = batch.map((_, i) => String(i));
        const decision = limitRate(limit, rate, now, { send: names, defer: [], booked: new Set(names) }, grace);
        rate = { starts: decision.starts ?? rate.starts, tail: decision.tail ?? rate.tail };
        for (let i = 0; i < decision.send.length; i++) begun.push(now + random() * grace);
        waiting.push(...decision.waiting.map((w) => w.at));
      }
      begun.sort((x, y) => x - y);
      expect(begun).toHaveLength(limit * 8);
      const most = Math.max(...begun.map((s) => begun.filter((t) => t >= s && t <= s + WINDOW_MS).length));
      expect(most).toBeLessThanOrEqual(limit);
    },
  );

  it.each([1, 2, 5, 50])(
    'the window sliding: deliveries arriving at random, each start up to the grace after its admission, ' +
      'never more than %i in any one-second window',
    (limit) => {
      let seed = limit;
      const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      let rate = state();
      const begun: number[] = [];
      let wakes = 0;
      // Due deliveries by the time they may next be admitted, and whether they waited for the rate.
      let waiting = Array.from({ length: limit * 12 }, () => ({ at: T0 + random() * 3000, booked: false }));
      while (waiting.length > 0) {
        waiting.sort((x, y) => x.at - y.at);
        const now = (waiting[0] as { at: number }).at;
        // Batches of 1 to 10: deliveries woken together may come one by one.
        const batch = waiting.filter((w) => w.at <= now + random() * 20).slice(0, 1 + Math.floor(random() * 10));
        waiting = waiting.slice(batch.length);
        wakes += batch.length;
        const names = batch.map((_, i) => String(i));
        const booked = new Set(names.filter((_, i) => batch[i]?.booked));
        const decision = limitRate(limit, rate, now, {
          send: names.slice(0, MAX_IN_FLIGHT),
          defer: names.slice(MAX_IN_FLIGHT),
          booked,
        });
        rate = { starts: decision.starts ?? rate.starts, tail: decision.tail ?? rate.tail };
        for (let i = 0; i < decision.send.length; i++) begun.push(now + random() * START_GRACE_MS);
        waiting.push(
          ...decision.waiting.map((w) => ({ at: w.at, booked: true })),
          ...decision.defer.map((id) => ({ at: now + 50, booked: booked.has(id) })),
        );
      }
      begun.sort((x, y) => x - y);
      expect(begun).toHaveLength(limit * 12);
      // Every closed window [s, s + 1 s] that starts at a start.
      const most = Math.max(...begun.map((s) => begun.filter((t) => t >= s && t <= s + WINDOW_MS).length));
      expect(most).toBeLessThanOrEqual(limit);
      // …and the pace is not far under the limit: 12 windows' worth in little more than 12 periods.
      expect((begun.at(-1) as number) - (begun[0] as number)).toBeLessThan(13 * RATE_PERIOD_MS);
      // …and the waiting ones wake about once each, not at every opening.
      expect(wakes / begun.length).toBeLessThan(2.5);
    },
  );
});

describe('a change of rate_limit', () => {
  it('raises the rate when it lets more requests start: a higher limit, or none', () => {
    expect([raisesRate(1, 1000), raisesRate(5, null), raisesRate(5, 5), raisesRate(5, 2)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    // No limit before: nothing waits for one.
    expect([raisesRate(null, 10), raisesRate(undefined, null)]).toEqual([false, false]);
  });
});
