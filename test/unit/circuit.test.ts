import {
  admit,
  afterAttempt,
  carriedKey,
  CIRCUIT_THRESHOLD,
  keptClosed,
  holdsBack,
  olderAttemptUnresolved,
  FIRST_PROBE_INTERVAL_MS,
  HEALTHY,
  IN_FLIGHT_WHILE_FAILING,
  MAX_IN_FLIGHT,
  MAX_PROBE_INTERVAL_MS,
  type EndpointGate,
  type EndpointHealth,
  type Lease,
  type LeaseTerms,
} from '../../shared/delivery/circuit';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const LEASE_MS = 15_000;
let n = 0;
const token = () => `t${++n}`;
/** Admissions at NOW, with leases of LEASE_MS. */
const TERMS: LeaseTerms = { now: NOW, leaseMs: LEASE_MS, token };
const ids = (count: number) => Array.from({ length: count }, (_, i) => `dlv_${i}`);
const lease = (until: number, probe = false): Lease => ({ taken: until - LEASE_MS, until, token: 'x', probe });
const gate = (health: Partial<EndpointHealth> = {}, leases: Record<string, Lease> = {}): EndpointGate => ({
  health: { ...HEALTHY, ...health },
  leases,
  lease_version: 3,
});
const at = (ms: number) => new Date(ms).toISOString();

describe('admission (closed circuit)', () => {
  it(`sends up to ${MAX_IN_FLIGHT} at once and defers the rest, without using an attempt`, () => {
    const a = admit(gate(), ids(10), TERMS);
    expect(a.send.map((s) => s.deliveryId)).toEqual(ids(MAX_IN_FLIGHT));
    expect(a.defer).toEqual(ids(10).slice(MAX_IN_FLIGHT));
    expect(a.circuitOpen).toEqual([]);
    expect(a.send.every((s) => s.lease.until === NOW + LEASE_MS && !s.lease.probe)).toBe(true);
    expect(new Set(a.send.map((s) => s.lease.token)).size).toBe(MAX_IN_FLIGHT);
  });

  it('counts live leases of other consumers against the limit, and ignores expired ones', () => {
    const a = admit(gate({}, { a: lease(NOW + 1), b: lease(NOW + 1), c: lease(NOW - 1) }), ids(5), TERMS);
    expect(a.send).toHaveLength(MAX_IN_FLIGHT - 2);
    expect(a.expired).toEqual(['c']);
  });

  it(
    `after an unanswered attempt allows ${IN_FLIGHT_WHILE_FAILING} in flight, ` +
      'so a hanging receiver holds one slot',
    () => {
      const hanging = gate({ consecutive_failures: 1, unanswered: true });
      expect(admit(hanging, ids(4), TERMS).send).toHaveLength(IN_FLIGHT_WHILE_FAILING);
      expect(
        admit(gate({ consecutive_failures: 2, unanswered: true }, { x: lease(NOW + 5) }), ids(4), TERMS).send,
      ).toHaveLength(0);
      // A receiver that answers an error at once holds no slot long: it keeps the full limit.
      expect(admit(gate({ consecutive_failures: 1, unanswered: false }), ids(4), TERMS).send).toHaveLength(
        MAX_IN_FLIGHT,
      );
    },
  );

  it('behind slow requests (a hanging receiver), deferred deliveries wait until the first lease ends', () => {
    const slow = gate({}, Object.fromEntries(ids(4).map((id, i) => [`old_${id}`, lease(NOW + LEASE_MS - 2000 + i)])));
    expect(admit(slow, ['dlv_x'], TERMS)).toMatchObject({
      defer: ['dlv_x'],
      deferUntil: NOW + LEASE_MS - 2000,
    });
    const quick = gate({}, Object.fromEntries(ids(4).map((id) => [`new_${id}`, lease(NOW + LEASE_MS - 10)])));
    expect(admit(quick, ['dlv_x'], TERMS)).toMatchObject({ defer: ['dlv_x'], deferUntil: null });
    // A success before the oldest lease was taken says nothing of it: still stuck.
    const before = gate({ last_success_at: at(NOW - 3000) }, slow.leases);
    expect(admit(before, ['dlv_x'], TERMS).deferUntil).toBe(NOW + LEASE_MS - 2000);
  });

  it('under a rate limit too, deferred deliveries behind slow requests wait until the first lease ends', () => {
    const slow = gate({}, Object.fromEntries(ids(4).map((id, i) => [`old_${id}`, lease(NOW + LEASE_MS - 2000 + i)])));
    expect(admit({ ...slow, rate_limit: 1000 }, ['dlv_x'], TERMS)).toMatchObject({
      defer: ['dlv_x'],
      deferUntil: NOW + LEASE_MS - 2000,
    });
  });

  it(
    'old leases with a success written since are runs passing their ' +
      'slots on, not stuck requests: deferred with no wait for the leases',
    () => {
      // Taken 2 s ago (a run that has passed its slot from success to success); a batch's last success was written 0.5
      // s ago.
      const running = gate(
        { last_success_at: at(NOW - 500) },
        Object.fromEntries(ids(4).map((id) => [`run_${id}`, lease(NOW + LEASE_MS - 2000)])),
      );
      expect(admit(running, ['dlv_x'], TERMS)).toMatchObject({
        send: [],
        defer: ['dlv_x'],
        deferUntil: null,
      });
    },
  );

  it('never sends a delivery that is already in flight (a duplicate message), nor one named twice', () => {
    const a = admit(gate({}, { dlv_0: lease(NOW + 1000) }), ['dlv_0', 'dlv_1', 'dlv_1'], TERMS);
    expect(a.inFlight).toEqual(['dlv_0']);
    expect(a.send.map((s) => s.deliveryId)).toEqual(['dlv_1']);
  });

  it(
    "a healthy endpoint's batch carries what it defers for its runs' slots, " +
      'until its leases end; not under a rate limit or after a failure',
    () => {
      const a = admit(gate(), ids(7), TERMS);
      expect(a.carry).toEqual(ids(7).slice(MAX_IN_FLIGHT));
      expect(a.carryUntil).toBe(NOW + LEASE_MS);
      expect(admit({ ...gate(), rate_limit: 50 }, ids(7), TERMS).carry).toEqual([]);
      expect(admit(gate({ consecutive_failures: 1 }), ids(7), TERMS).carry).toEqual([]);
      // Nothing sent (every slot taken by others): nothing to carry either, it all waits on the queue.
      expect(
        admit(gate({}, { a: lease(NOW + 1), b: lease(NOW + 1), c: lease(NOW + 1), d: lease(NOW + 1) }), ids(2), TERMS)
          .carry,
      ).toEqual([]);
    },
  );

  it(
    "a delivery another batch's runs carry is neither sent nor carried again, " +
      'but sent back like a deferral; a carried entry past its time is dropped',
    () => {
      const carried = { [carriedKey('dlv_1')]: NOW + 1000, [carriedKey('dlv_9')]: NOW };
      const a = admit({ ...gate(), carried }, ids(6), TERMS);
      expect(a.elsewhere).toEqual(['dlv_1']);
      expect(a.send.map((s) => s.deliveryId)).toEqual(['dlv_0', 'dlv_2', 'dlv_3', 'dlv_4']);
      expect(a.carry).toEqual(['dlv_5']);
      expect(a.expiredCarried).toEqual([carriedKey('dlv_9')]);
      // Its attribute names the id by its last characters: deliveries of one endpoint never share one.
      expect(carriedKey('dlv_01jd3x8r6mz2k4q9w7e5t1y3b0')).toBe('c_w7e5t1y3b0');
    },
  );

  it('leaves the health object untouched when the circuit does not change', () => {
    const g = gate();
    expect(admit(g, ids(1), TERMS).health).toBe(g.health);
  });
});

describe('admission (open circuit)', () => {
  it('before the probe time: every due delivery is recorded as not sent', () => {
    const a = admit(gate({ circuit: 'open', next_probe_at: at(NOW + 1) }), ids(3), TERMS);
    expect(a.send).toEqual([]);
    expect(a.circuitOpen).toEqual(ids(3));
  });

  it('at the probe time: one real delivery goes out as the probe (half_open), the others are not sent', () => {
    const a = admit(gate({ circuit: 'open', next_probe_at: at(NOW) }), ids(3), TERMS);
    expect(a.send).toEqual([{ deliveryId: 'dlv_0', lease: expect.objectContaining({ probe: true }) }]);
    expect(a.circuitOpen).toEqual(['dlv_1', 'dlv_2']);
    expect(a.health.circuit).toBe('half_open');
  });

  it('while a probe is in flight: no second probe', () => {
    const a = admit(
      gate({ circuit: 'half_open', next_probe_at: at(NOW - 10) }, { p: lease(NOW + 100, true) }),
      ids(2),
      TERMS,
    );
    expect(a.send).toEqual([]);
    expect(a.circuitOpen).toEqual(ids(2));
  });

  it('a probe whose consumer died (lease expired) is replaced by a new one', () => {
    const a = admit(
      gate({ circuit: 'half_open', next_probe_at: at(NOW - 10) }, { p: lease(NOW - 1, true) }),
      ids(1),
      TERMS,
    );
    expect(a.send).toHaveLength(1);
    expect(a.expired).toEqual(['p']);
  });
});

describe('health after an attempt', () => {
  const scale = 1;
  it(`opens after ${CIRCUIT_THRESHOLD} consecutive failures, first probe ${FIRST_PROBE_INTERVAL_MS} ms later`, () => {
    let h: EndpointHealth = HEALTHY;
    for (let i = 1; i < CIRCUIT_THRESHOLD; i++) {
      h = afterAttempt(h, { succeeded: false, probe: false, retryAfterMs: null }, NOW, scale);
      expect(h).toMatchObject({
        circuit: 'closed',
        consecutive_failures: i,
        last_failure_at: at(NOW),
        unanswered: false,
      });
    }
    h = afterAttempt(h, { succeeded: false, probe: false, retryAfterMs: null }, NOW, scale);
    expect(h).toMatchObject({
      circuit: 'open',
      consecutive_failures: CIRCUIT_THRESHOLD,
      next_probe_at: at(NOW + FIRST_PROBE_INTERVAL_MS),
    });
  });

  it('a failed probe doubles the interval, up to the cap', () => {
    let h: EndpointHealth = {
      ...HEALTHY,
      circuit: 'half_open',
      consecutive_failures: 5,
      probe_interval_ms: FIRST_PROBE_INTERVAL_MS,
    };
    const intervals: number[] = [];
    for (let i = 0; i < 6; i++) {
      h = afterAttempt(
        { ...h, circuit: 'half_open' },
        { succeeded: false, probe: true, retryAfterMs: null },
        NOW,
        scale,
      );
      intervals.push(Date.parse(h.next_probe_at as string) - NOW);
    }
    expect(intervals).toEqual([30_000, 60_000, 120_000, 240_000, MAX_PROBE_INTERVAL_MS, MAX_PROBE_INTERVAL_MS]);
    expect(h.circuit).toBe('open');
  });

  it('Retry-After of a slow-down answer keeps the circuit open at least that long, within the cap', () => {
    const opening = { ...HEALTHY, consecutive_failures: CIRCUIT_THRESHOLD - 1 };
    expect(
      afterAttempt(opening, { succeeded: false, probe: false, retryAfterMs: 120_000 }, NOW, scale).next_probe_at,
    ).toBe(at(NOW + 120_000));
    expect(
      afterAttempt(opening, { succeeded: false, probe: false, retryAfterMs: 3_600_000 }, NOW, scale).next_probe_at,
    ).toBe(at(NOW + MAX_PROBE_INTERVAL_MS));
  });

  it('a success closes the circuit and resets the count, keeping when the last failure was', () => {
    const open = {
      ...HEALTHY,
      circuit: 'half_open' as const,
      consecutive_failures: 9,
      last_failure_at: at(NOW - 5),
      next_probe_at: at(NOW),
      probe_interval_ms: 60_000,
    };
    expect(afterAttempt(open, { succeeded: true, probe: true, retryAfterMs: null }, NOW, scale)).toEqual({
      circuit: 'closed',
      consecutive_failures: 0,
      last_success_at: at(NOW),
      last_failure_at: at(NOW - 5),
      next_probe_at: null,
      probe_interval_ms: null,
    });
  });

  it('a failure of a request sent before the circuit opened does not move the probe time', () => {
    const open = {
      ...HEALTHY,
      circuit: 'open' as const,
      consecutive_failures: 6,
      next_probe_at: at(NOW + 7),
      probe_interval_ms: 15_000,
    };
    expect(afterAttempt(open, { succeeded: false, probe: false, retryAfterMs: null }, NOW, scale)).toMatchObject({
      circuit: 'open',
      consecutive_failures: 7,
      next_probe_at: at(NOW + 7),
    });
  });

  it('scales every interval with TIME_SCALE', () => {
    const h = afterAttempt(
      { ...HEALTHY, consecutive_failures: CIRCUIT_THRESHOLD - 1 },
      { succeeded: false, probe: false, retryAfterMs: null },
      NOW,
      0.001,
    );
    expect(h.next_probe_at).toBe(at(NOW + FIRST_PROBE_INTERVAL_MS * 0.001));
  });
});

describe('deferral (over the in-flight limit)', () => {
  it('doubles each wait from the base, up to 5 s, with ±20 % jitter', async () => {
    const { deferDelayMs, MAX_DEFER_MS } = await import('../../shared/delivery/put-off');
    const mid = () => 0.5;
    expect([1, 2, 3, 4].map((n) => deferDelayMs(1000, n, mid))).toEqual([1000, 2000, 4000, MAX_DEFER_MS]);
    expect(deferDelayMs(1000, 50, mid)).toBe(MAX_DEFER_MS);
    expect([deferDelayMs(1000, 1, () => 0), deferDelayMs(1000, 1, () => 1)]).toEqual([800, 1200]);
  });
});

describe('opening the circuit in the order the receiver answered', () => {
  const LEASE_MS = 15_000;
  const taken = (at: number): Lease => ({ taken: at, until: at + LEASE_MS, token: 't', probe: false });

  it('holds the opening while an attempt that started earlier is unanswered; not for later or ended ones', () => {
    const startedAt = NOW - 100;
    expect(
      olderAttemptUnresolved({ mine: taken(startedAt), older: taken(startedAt - 50) }, 'mine', startedAt, NOW),
    ).toBe(true);
    expect(
      olderAttemptUnresolved({ mine: taken(startedAt), newer: taken(startedAt + 50) }, 'mine', startedAt, NOW),
    ).toBe(false);
    expect(
      olderAttemptUnresolved({ mine: taken(startedAt), expired: taken(NOW - LEASE_MS - 1) }, 'mine', startedAt, NOW),
    ).toBe(false);
    expect(olderAttemptUnresolved({ mine: taken(startedAt) }, 'mine', startedAt, NOW)).toBe(false);
  });

  it('a held failure is counted with the circuit as it was', () => {
    const before: EndpointHealth = { ...HEALTHY, consecutive_failures: CIRCUIT_THRESHOLD - 1 };
    const after = afterAttempt(before, { succeeded: false, probe: false, retryAfterMs: null }, NOW, 1);
    expect(after.circuit).toBe('open');
    expect(keptClosed(after, before)).toMatchObject({
      circuit: 'closed',
      consecutive_failures: CIRCUIT_THRESHOLD,
      next_probe_at: null,
      probe_interval_ms: null,
    });
  });
});

describe('holdsBack: what falls due now is not sent, whatever the leases', () => {
  const open = (nextProbeAt: string | null, circuit: EndpointHealth['circuit'] = 'open'): EndpointHealth => ({
    ...HEALTHY,
    circuit,
    consecutive_failures: CIRCUIT_THRESHOLD,
    next_probe_at: nextProbeAt,
    probe_interval_ms: 15_000,
  });
  const future = new Date(NOW + 1_000).toISOString();
  const past = new Date(NOW - 1).toISOString();

  it('holds back while open with the probe not yet due, and admit agrees for any leases', () => {
    expect(holdsBack(open(future), NOW)).toBe(true);
    for (const leases of [{}, { d_x: { until: NOW + LEASE_MS, token: 't', probe: false } }] as Record<
      string,
      Lease
    >[]) {
      const admission = admit({ health: open(future), leases, lease_version: 1 }, ['d_1'], TERMS);
      expect(admission).toMatchObject({ send: [], circuitOpen: ['d_1'] });
    }
  });

  it('does not once the probe is due, nor when closed or half open (the consumer decides those)', () => {
    expect(holdsBack(open(past), NOW)).toBe(false);
    expect(holdsBack(open(null), NOW)).toBe(false);
    expect(holdsBack(open(future, 'half_open'), NOW)).toBe(false);
    expect(holdsBack(HEALTHY, NOW)).toBe(false);
  });
});
