import { randomBytes } from 'node:crypto';
import type { Resource } from '../domain/resources';
import { limitRate, type RateStarts } from './rate-window';

/**
 * Per-endpoint isolation as pure functions: how many requests an endpoint may have in
 * flight, its circuit (closed → open → half_open → closed), and which due deliveries go
 * out now. The consumer applies these decisions with conditional writes on the endpoint
 * item; every number is documented in docs/delivery-engine.md and the README.
 */

/** Requests in flight to one endpoint, fleet-wide, while it answers. */
export const MAX_IN_FLIGHT = 4;
/**
 * …and after an attempt that got no answer (timeout, refused connection), until one does: a hanging
 * receiver holds one slot.
 */
export const IN_FLIGHT_WHILE_FAILING = 1;
/** Consecutive failed attempts that open the circuit. */
export const CIRCUIT_THRESHOLD = 5;
/** Probe interval while open: 15 s, doubling after each failed probe, at most 5 min (scaled by TIME_SCALE). */
export const FIRST_PROBE_INTERVAL_MS = 15_000;
export const MAX_PROBE_INTERVAL_MS = 5 * 60_000;
/** A request in flight longer than this, with no success since, marks the endpoint as slow for deferral. */
export const SLOW_REQUEST_MS = 1_000;

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface EndpointHealth {
  circuit: CircuitState;
  consecutive_failures: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  next_probe_at: string | null;
  /** The interval that set `next_probe_at` (internal: not in the API resource). */
  probe_interval_ms: number | null;
  /** The last failure got no answer at all (internal): such requests hold slots for the whole timeout. */
  unanswered?: boolean;
}

/** One request in flight to an endpoint: held until `until` (epoch ms) unless released earlier. */
export interface Lease {
  /** When it was admitted (epoch ms). */
  taken: number;
  until: number;
  /** Identifies the holder, so a release never removes a lease that expired and was taken again. */
  token: string;
  probe: boolean;
}

/** What the consumer reads and writes on the endpoint's state item to admit deliveries. */
export interface EndpointGate {
  health: EndpointHealth;
  /** Keyed by delivery id. */
  leases: Record<string, Lease>;
  /** Bumped by every admission, so two consumers never admit on the same view. */
  lease_version: number;
  /** Requests per second, fleet-wide (./rate-window.ts); null or absent: the in-flight bound alone. */
  rate_limit?: number | null;
  /**
   * The starts the rate counts and the last place promised to a waiting delivery, written by
   * admissions on the version only.
   */
  rate_starts?: RateStarts;
  rate_tail?: number | null;
  /**
   * Deliveries batches hold for their runs (sent under their slots, with no lease of their own):
   * until when (epoch ms), by `carriedKey`.
   */
  carried?: Record<string, number>;
}

/**
 * The state item's attribute that says a batch's runs carry the delivery: top level, so any
 * write sets or removes it with no map to create first; the id's last 10 characters (50 random
 * bits) tell an endpoint's deliveries apart and keep the item small.
 */
export const carriedKey = (deliveryId: string): string => `c_${deliveryId.slice(-10)}`;

export const HEALTHY: EndpointHealth = {
  circuit: 'closed',
  consecutive_failures: 0,
  last_success_at: null,
  last_failure_at: null,
  next_probe_at: null,
  probe_interval_ms: null,
};

export interface Admission {
  /** Send now, under these leases. */
  send: { deliveryId: string; lease: Lease }[];
  /** Due while the circuit is open: recorded as a `circuit_open` attempt, not sent. */
  circuitOpen: string[];
  /** Over the endpoint's in-flight limit: back on the queue shortly, no attempt used. */
  defer: string[];
  /**
   * When the requests in flight look stuck (the oldest is over a second old and nothing
   * succeeded since: a hanging receiver), the deferred ones wait until the first of them
   * must have ended (epoch ms), instead of polling the endpoint: null otherwise.
   */
  deferUntil: number | null;
  /**
   * Already being attempted under a live lease (a duplicate message). Its copy waits until
   * `inFlightUntil`, when that lease ends: the attempt is recorded by then, unless its worker
   * died, and then the copy is the row's only wake-up.
   */
  inFlight: string[];
  inFlightUntil: number | null;
  /**
   * Carried by another batch's runs (a duplicate message, a sweep, a pull): it waits, like `defer`
   * (a pulled one stays due on its row), for they may give it back.
   */
  elsewhere: string[];
  /**
   * Deferred deliveries this batch keeps for its runs' slots (healthy endpoint, no rate limit):
   * written as carried, until `carryUntil`.
   */
  carry: string[];
  carryUntil: number;
  /** Carried entries past their time (a consumer that died), dropped in the same write. */
  expiredCarried: string[];
  /** Expired leases to drop in the same write. */
  expired: string[];
  /** The circuit after admission (half_open when a probe goes out). */
  health: EndpointHealth;
  /**
   * Over the endpoint's rate: back on the queue when the rate has room (epoch ms), no attempt used,
   * no backoff grown.
   */
  rateLimited?: { deliveryId: string; at: number }[];
  /** The rate's starts to write with the leases (rate-limited endpoints only; they admit on the version). */
  rateStarts?: RateStarts | null;
  /** The new end of the line of deliveries waiting for the rate, when this admission added to it. */
  rateTail?: number | null;
}

/**
 * A lease's holder: 72 random bits tell holders apart, in a third of a UUID's bytes on the
 * endpoint's state item (up to four leases, written by every admission and release).
 */
export const leaseToken = (): string => randomBytes(9).toString('base64url');

export const isLive = (lease: Lease | undefined, now: number): lease is Lease =>
  lease !== undefined && lease.until > now;

export function liveLease(gate: EndpointGate, deliveryId: string, now: number): boolean {
  return isLive(gate.leases[deliveryId], now);
}

const probeDue = (health: EndpointHealth, now: number): boolean =>
  health.next_probe_at === null || Date.parse(health.next_probe_at) <= now;

/**
 * The requests in flight look stuck (a hanging receiver): the oldest was admitted over
 * SLOW_REQUEST_MS ago and no success has been written since. An old lease alone says
 * little: a run passes its slot from success to success under one lease for up to 5 s
 * (shared/delivery/runway.ts). Its successes reach the endpoint's health only when
 * its batch's last run ends, so this sees runs move through the other batches that end
 * meanwhile; one batch alone holding every slot still looks stuck after a second (its last
 * success then pulls the deferred deliveries, or queues them again: deliver-batch.ts).
 */
function stuck(gate: EndpointGate, live: [string, Lease][], now: number): boolean {
  const oldestTaken = Math.min(...live.map(([, l]) => l.taken));
  const lastSuccess = gate.health.last_success_at === null ? -Infinity : Date.parse(gate.health.last_success_at);
  return now - oldestTaken > SLOW_REQUEST_MS && !(lastSuccess > oldestTaken);
}

/**
 * When an admission happens (epoch ms), and the leases it hands out: each held `leaseMs`, its
 * holder named by `token()`.
 */
export interface LeaseTerms {
  now: number;
  leaseMs: number;
  token: () => string;
}

/** What a rate-limited endpoint's admission knows of its line (./rate-window.ts, `limitRate`). */
export interface RateLine {
  /** Deliveries that waited for the rate already. */
  booked?: ReadonlySet<string>;
  /** How long after now the admitted ones must start. */
  grace?: number;
}

/**
 * Which of the due deliveries (in the order given) go out now. Closed: up to the in-flight
 * limit. Open or half_open: one probe when none is in flight and the probe time has come;
 * every other due delivery is recorded as not sent (`circuit_open`). Beneath both, the
 * endpoint's rate limit, if it has one: what it has no room for waits (`rateLimited`).
 */
export function admit(
  gate: EndpointGate,
  deliveryIds: string[],
  terms: LeaseTerms,
  { booked = new Set(), grace }: RateLine = {},
): Admission {
  const { now } = terms;
  const out = admitSlots(gate, deliveryIds, terms);
  // Over the limit of a healthy endpoint, the batch keeps the rest for the slots its runs free (./runway.ts).
  if (!gate.rate_limit)
    return out.health.circuit === 'closed' && out.health.consecutive_failures === 0 && out.send.length > 0
      ? { ...out, carry: out.defer }
      : out;
  const rate = limitRate(
    gate.rate_limit,
    { starts: gate.rate_starts ?? {}, tail: gate.rate_tail ?? null },
    now,
    { send: out.send.map((s) => s.deliveryId), defer: out.defer, booked },
    grace,
  );
  // A probe the rate holds back leaves the circuit as it was.
  const health = rate.send.length < out.send.length ? gate.health : out.health;
  const send = out.send.filter((s) => rate.send.includes(s.deliveryId));
  return {
    ...out,
    send,
    defer: rate.defer,
    deferUntil: rate.defer.length ? out.deferUntil : null,
    rateLimited: rate.waiting,
    rateStarts: rate.starts,
    rateTail: rate.tail,
    health,
  };
}

function admitSlots(gate: EndpointGate, deliveryIds: string[], { now, leaseMs, token }: LeaseTerms): Admission {
  const live = Object.entries(gate.leases).filter(([, lease]) => isLive(lease, now));
  const expired = Object.keys(gate.leases).filter((id) => !isLive(gate.leases[id], now));
  const unique = [...new Set(deliveryIds)];
  const carried = gate.carried ?? {};
  const inFlight = unique.filter((id) => isLive(gate.leases[id], now));
  const elsewhere = unique.filter((id) => !inFlight.includes(id) && (carried[carriedKey(id)] ?? 0) > now);
  const due = unique.filter((id) => !inFlight.includes(id) && !elsewhere.includes(id));
  const lease = (probe: boolean): Lease => ({ taken: now, until: now + leaseMs, token: token(), probe });
  const expiredCarried = Object.keys(carried).filter((k) => !((carried[k] ?? 0) > now));
  const out: Admission = {
    send: [],
    circuitOpen: [],
    defer: [],
    deferUntil: null,
    inFlight,
    inFlightUntil: inFlight.length > 0 ? Math.max(...inFlight.map((id) => gate.leases[id]?.until ?? now)) : null,
    elsewhere,
    carry: [],
    carryUntil: now + leaseMs,
    expiredCarried,
    expired,
    health: gate.health,
  };

  if (gate.health.circuit === 'closed') {
    const limit =
      gate.health.consecutive_failures > 0 && gate.health.unanswered ? IN_FLIGHT_WHILE_FAILING : MAX_IN_FLIGHT;
    const free = Math.max(0, limit - live.length);
    out.send = due.slice(0, free).map((deliveryId) => ({ deliveryId, lease: lease(false) }));
    out.defer = due.slice(free);
    if (out.defer.length > 0 && free === 0 && stuck(gate, live, now))
      out.deferUntil = Math.min(...live.map(([, l]) => l.until));
    return out;
  }
  const probing = live.some(([, l]) => l.probe);
  const [first, ...rest] = due;
  if (first !== undefined && !probing && probeDue(gate.health, now) && live.length < MAX_IN_FLIGHT) {
    out.send = [{ deliveryId: first, lease: lease(true) }];
    out.health = { ...gate.health, circuit: 'half_open' };
    out.circuitOpen = rest;
  } else {
    out.circuitOpen = due;
  }
  return out;
}

/**
 * Open, and its next probe not due yet: whatever falls due now is not sent, whatever the
 * endpoint's leases (`admit` would record it `circuit_open`), so a new delivery's first
 * attempt can be recorded as such where the row is created, with no queue message.
 */
export const holdsBack = (health: EndpointHealth, now: number): boolean =>
  health.circuit === 'open' && !probeDue(health, now);

export interface AttemptSignal {
  succeeded: boolean;
  /** The attempt was the circuit's probe. */
  probe: boolean;
  /** Retry-After of a slow-down answer: the circuit stays open at least this long (within the cap). */
  retryAfterMs: number | null;
  /** The failure got no HTTP answer (timeout, connection refused or reset). */
  unanswered?: boolean;
}

/**
 * The endpoint's health after a sent attempt. A success closes the circuit. A failure
 * counts; the threshold opens the circuit (first probe after 15 s scaled); a failed probe
 * reopens it with twice the interval, up to 5 min scaled.
 */
export function afterAttempt(
  health: EndpointHealth,
  signal: AttemptSignal,
  now: number,
  timeScale: number,
): EndpointHealth {
  const at = new Date(now).toISOString();
  if (signal.succeeded) return { ...HEALTHY, last_success_at: at, last_failure_at: health.last_failure_at };
  const failures = health.consecutive_failures + 1;
  const failed = {
    ...health,
    consecutive_failures: failures,
    last_failure_at: at,
    unanswered: signal.unanswered === true,
  };
  const first = FIRST_PROBE_INTERVAL_MS * timeScale;
  const max = MAX_PROBE_INTERVAL_MS * timeScale;
  let interval: number;
  if (signal.probe) interval = Math.min(max, 2 * (health.probe_interval_ms ?? first / 2));
  else if (health.circuit === 'closed' && failures >= CIRCUIT_THRESHOLD) interval = first;
  else return failed;
  interval = Math.min(max, Math.max(interval, signal.retryAfterMs ?? 0));
  return {
    ...failed,
    circuit: 'open',
    probe_interval_ms: interval,
    next_probe_at: new Date(now + interval).toISOString(),
  };
}

/**
 * Whether another attempt of the endpoint, started before `startedAt`, is still unresolved
 * (its lease is live). Its answer may have come before ours and be a success not yet
 * written: a failure that would open the circuit then waits for it (counts, but does not
 * open), so "consecutive" follows the order the receiver answered, not the order of writes.
 */
export function olderAttemptUnresolved(
  leases: Record<string, Lease>,
  deliveryId: string,
  startedAt: number,
  now: number,
): boolean {
  return Object.entries(leases).some(([id, l]) => id !== deliveryId && isLive(l, now) && l.taken < startedAt);
}

/** The health after a failure that may not open the circuit yet: counted, the circuit as it was. */
export function keptClosed(after: EndpointHealth, before: EndpointHealth): EndpointHealth {
  return {
    ...after,
    circuit: before.circuit,
    next_probe_at: before.next_probe_at,
    probe_interval_ms: before.probe_interval_ms,
  };
}

/**
 * What the API shows of the circuit. A disabled endpoint is sent nothing, probes included: its
 * circuit and counters show what its last attempts left (why it was disabled), and no probe is
 * to come. An attempt under way at the disable may still write a probe time; it is not shown.
 */
export function toHealthResource(h: EndpointHealth, enabled: boolean): Resource<'endpointHealth'> {
  return {
    circuit: h.circuit,
    consecutive_failures: h.consecutive_failures,
    last_success_at: h.last_success_at,
    last_failure_at: h.last_failure_at,
    next_probe_at: enabled ? h.next_probe_at : null,
  };
}
