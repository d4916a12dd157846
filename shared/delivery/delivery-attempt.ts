import { logger } from '../logger';
import { graceAfterLate, START_GRACE_MS } from './rate-window';
import {
  admit,
  afterAttempt,
  CIRCUIT_THRESHOLD,
  heldClosed,
  leaseToken,
  MAX_IN_FLIGHT,
  olderAttemptUnresolved,
  type Admission,
  type EndpointHealth,
  type Lease,
} from './circuit';
import { decide, isSlowDown, sweepGraceMs } from './policy';
import { attemptUpdate, notSentAttempt, planNext } from './attempt-plan';
import type { SendResult } from './sender';
import { signedHeaders } from './signer';
import { messageOf, type AttemptRecord, type DeliveryMessage, type DeliveryRecord } from './deliveries';
import type { AttemptDeps, AttemptInputs } from './delivery-ports';
import {
  awaitAdmissions,
  newBatchContext,
  newRunway,
  settlePulled,
  type BatchContext,
  type Due,
  type Run,
  type Runway,
} from './delivery-runway';
import { disableIfDue } from './endpoint-failure';
import { releaseNextInOrder } from './resource-order';
import { isOpenStatus } from './delivery-status';
import { toEventResource, type EventRecord } from '../domain/events';
import { signingSecrets, type EndpointRecord } from '../domain/webhook-endpoints';

export type AttemptVerdict =
  | 'delivered'
  | 'retry_scheduled'
  | 'failed'
  | 'circuit_open'
  | 'deferred'
  | 'in_flight'
  | 'cancelled'
  | 'duplicate'
  | 'missing';

/** A lease outlives the request it covers by the time to read and record around it. */
const leaseMs = (timeoutMs: number) => timeoutMs + 5_000;

/**
 * One batch of queue messages (svix's worker, in stages): read every row, event and
 * endpoint in one request; per endpoint, admit what its in-flight limit and circuit allow
 * (one conditional write); then send, record and release each admitted delivery, record
 * the ones the open circuit holds back, and put the rest back on the queue shortly. A slot
 * freed by a success passes on to the endpoint's next due delivery with no endpoint write
 * (a run: see ./delivery-runway.ts): one of this batch, or, when deliveries wait on the
 * queue for a slot, one read from the table. No delivery waits
 * on another endpoint's receiver. The row is the truth: every change is conditional on its
 * attempt count, so a duplicate message sends nothing.
 */
export async function deliverBatch(
  deps: AttemptDeps,
  messages: DeliveryMessage[],
): Promise<PromiseSettledResult<AttemptVerdict>[]> {
  const inputs = await deps.deliveries.readForAttempts(messages);
  const ctx = newBatchContext(deps.now().getTime());
  const groups = new Map<string, { endpoint: EndpointRecord | null; due: Due[] }>();
  const early = messages.map((message): AttemptVerdict | Due => {
    const read = readDue(inputs, message);
    if (read === 'missing') return read;
    if (read === 'duplicate' || ctx.taken.has(read.delivery.id)) return 'duplicate';
    const { delivery } = read;
    ctx.taken.add(delivery.id);
    const key = `${delivery.shop_id}/${delivery.endpoint_id}`;
    const endpoint = inputs.endpoint(message);
    const group = groups.get(key) ?? { endpoint: endpoint?.id === delivery.endpoint_id ? endpoint : null, due: [] };
    group.due.push(read);
    groups.set(key, group);
    return read;
  });
  const byDelivery = new Map<string, Promise<AttemptVerdict>>();
  awaitAdmissions(ctx, groups.size);
  for (const { endpoint, due } of groups.values()) {
    const settled = forEndpoint(deps, endpoint, due, ctx, false);
    due.forEach((d) =>
      byDelivery.set(
        d.delivery.id,
        settled.then((verdicts) => verdicts.get(d.delivery.id) as Promise<AttemptVerdict>),
      ),
    );
  }
  const results = await Promise.allSettled(
    early.map((e) =>
      typeof e === 'string' ? Promise.resolve(e) : (byDelivery.get(e.delivery.id) as Promise<AttemptVerdict>),
    ),
  );
  await settlePulled(ctx);
  return results;
}

const isOpen = (d: DeliveryRecord) => isOpenStatus(d.status);

/** A message's row and event as read: gone, already past this attempt (or ended), or due. */
function readDue(inputs: AttemptInputs, message: DeliveryMessage): Due | 'missing' | 'duplicate' {
  const delivery = inputs.delivery(message);
  const event = inputs.event(message);
  if (!delivery || !event) return 'missing';
  // A held row waits for an earlier delivery of its resource (./resource-order.ts): a message for it sends nothing.
  return isOpen(delivery) && delivery.attempts < message.attempt && !delivery.held_by
    ? { message, delivery, event }
    : 'duplicate';
}

/** `pulled`: the deliveries were read from the table, not given by messages; they have wake-ups of their own, so none goes back on the queue. */
async function forEndpoint(
  deps: AttemptDeps,
  read: EndpointRecord | null,
  due: Due[],
  ctx: BatchContext,
  pulled: boolean,
): Promise<Map<string, Promise<AttemptVerdict>>> {
  const first = due[0] as Due;
  const now = deps.now();
  let admitted: Awaited<ReturnType<typeof admitOn>>;
  try {
    const endpoint = read ?? (await deps.endpoints.get(first.delivery.shop_id, first.delivery.endpoint_id));
    admitted = endpoint?.enabled ? await admitOn(deps, endpoint, due) : null;
  } finally {
    if (!pulled) ctx.admitted();
  }
  // What sends nothing waits until the batch's admissions are written.
  const later = (write: () => Promise<AttemptVerdict>) => ctx.admissions.then(write);
  const verdicts = new Verdicts();
  for (const d of due) {
    const id = d.delivery.id;
    if (!admitted)
      verdicts.set(
        id,
        later(() => cancel(deps, d.delivery)),
      );
    else if (!admitted.admission) verdicts.set(id, pulled ? LEFT_DUE : later(() => defer(deps, d, now)));
  }
  if (!admitted?.admission) return verdicts;
  const { endpoint: current, admission, grace } = admitted;
  const find = (id: string) => due.find((d) => d.delivery.id === id) as Due;
  const healthy = admission.health.circuit === 'closed' && admission.health.consecutive_failures === 0;
  // Over the limit of a healthy endpoint: wait in this batch for a slot one of ours frees (not
  // under a rate limit: every start it counts goes through an admission). The admission wrote
  // them as carried: a batch with another wake-up of one lets it wait meanwhile (`elsewhere`).
  const handsOn = admission.carry.length > 0;
  const runway = newRunway<AttemptVerdict>(ctx, {
    runs: admission.send.length,
    waiting: admission.carry.map(find),
    heldUntil: admission.carryUntil,
    pulled,
    giveBack: (d) => (pulled ? LEFT_DUE : defer(deps, d, deps.now())),
  });
  // …or, when none of ours is in flight, on the queue; the endpoint is marked, so the next success pulls due ones from the table.
  // Behind requests that look stuck too: their messages wait until the first lease ends, but a success
  // (the receiver was only slow) takes the mark and pulls them at once; a hanging receiver never does.
  const waitOnQueue = !handsOn && !pulled && admission.defer.length > 0;
  const mark = waitOnQueue && healthy && current.backlog_at === undefined;
  const marked = mark ? deps.endpoints.markBacklog(current, now.toISOString()).catch(() => undefined) : undefined;
  for (const { deliveryId, lease } of admission.send)
    verdicts.set(
      deliveryId,
      attempt(deps, find(deliveryId), {
        endpoint: current,
        health: admission.health,
        run: runOf(deliveryId, lease, current, grace),
        runway,
      }),
    );
  for (const id of admission.circuitOpen)
    verdicts.set(
      id,
      later(() => recordNotSent(deps, find(id), now)),
    );
  for (const id of admission.defer)
    verdicts.set(
      id,
      handsOn ? runway.verdict(id) : pulled ? LEFT_DUE : later(() => defer(deps, find(id), now, admission.deferUntil)),
    );
  for (const { deliveryId, at } of admission.rateLimited ?? [])
    verdicts.set(deliveryId, pulled ? LEFT_DUE : later(() => waitForRate(deps, find(deliveryId), at)));
  for (const id of admission.inFlight)
    verdicts.set(id, pulled ? LEFT_DUE : later(() => afterLease(deps, find(id), now, admission.inFlightUntil)));
  for (const id of admission.elsewhere) verdicts.set(id, pulled ? LEFT_DUE : later(() => defer(deps, find(id), now)));
  await marked;
  return verdicts;
}

/**
 * A duplicate of a message whose delivery another worker is attempting: it comes back when
 * that worker's lease ends. Acknowledged at once, it could take the only wake-up of a row on
 * its fast path with it, should that worker die before it records the attempt.
 */
async function afterLease(deps: AttemptDeps, due: Due, now: Date, until: number | null): Promise<AttemptVerdict> {
  await defer(deps, due, now, until);
  return 'in_flight';
}

/**
 * The verdicts of one endpoint's deliveries. One can fail before the batch reads it (its write
 * failed while other endpoints were still being admitted): each is marked handled as it is set,
 * so the process does not die of an unhandled rejection, and the batch still reports it.
 */
class Verdicts extends Map<string, Promise<AttemptVerdict>> {
  override set(deliveryId: string, verdict: Promise<AttemptVerdict>): this {
    verdict.catch(() => undefined);
    return super.set(deliveryId, verdict);
  }
}

/** A pulled delivery this batch does not take after all: it stays due on its row, and its own message or the sweeper wakes it. */
const LEFT_DUE: Promise<AttemptVerdict> = Promise.resolve('deferred');

/** Due deliveries read from the table at a time. */
const PULL_PAGE = 8;

/**
 * A success freed a slot of an endpoint whose deliveries wait for one: read its due ones
 * from the table (oldest first) and attempt them in this batch, at the endpoint's limit.
 * Whatever goes wrong, the rows keep their own wake-ups (queue message, schedule, sweeper).
 */
async function pullDue(deps: AttemptDeps, endpoint: EndpointRecord, ctx: BatchContext): Promise<void> {
  try {
    const listed = await deps.deliveries.listDueForEndpoint(
      endpoint.shop_id,
      endpoint.id,
      deps.now(),
      PULL_PAGE + MAX_IN_FLIGHT,
    );
    const found = listed.filter((m) => !ctx.taken.has(m.delivery_id)).slice(0, PULL_PAGE);
    if (found.length === 0) return;
    found.forEach((m) => ctx.taken.add(m.delivery_id));
    const inputs = await deps.deliveries.readForAttempts(found);
    // An ordered row never attempted goes out only once its chain admits it (./resource-order.ts), with its own message.
    const due = found
      .map((message) => readDue(inputs, message))
      .filter((d): d is Due => typeof d !== 'string' && !(d.delivery.order_key && d.delivery.attempts === 0));
    const current = inputs.endpoint(found[0] as DeliveryMessage);
    if (due.length === 0 || !current) return;
    await Promise.allSettled((await forEndpoint(deps, current, due, ctx, true)).values());
  } catch {
    // Nothing lost: see above.
  }
}

/**
 * A success past its batch's runway found deliveries waiting for a slot: it does not pull them
 * (the invocation would outlast its runway), but sends a page of them to the queue, due now, so
 * a batch takes them at once instead of at their deferral's end (up to a lease's 15 s behind
 * requests that looked stuck). A full page leaves the mark on for the next success. Their older
 * messages find the attempt done and send nothing; whatever fails, the rows keep their wake-ups.
 */
async function requeueDue(deps: AttemptDeps, endpoint: EndpointRecord, ctx: BatchContext): Promise<void> {
  try {
    const listed = await deps.deliveries.listDueForEndpoint(
      endpoint.shop_id,
      endpoint.id,
      deps.now(),
      PULL_PAGE + MAX_IN_FLIGHT,
    );
    const due = listed.filter((m) => !ctx.taken.has(m.delivery_id));
    if (due.length === 0) return;
    await deps.queue.send(due);
    if (listed.length === PULL_PAGE + MAX_IN_FLIGHT)
      await deps.endpoints.markBacklog(endpoint, deps.now().toISOString());
  } catch {
    // Nothing lost: see above.
  }
}

/**
 * Admits on the endpoint as read; a lost race re-reads it, up to three times. Null when the
 * endpoint is gone or disabled (its deliveries are cancelled); no admission: defer them all.
 * `grace`: how long after its admission a request to a rate-limited endpoint may start.
 */
async function admitOn(
  deps: AttemptDeps,
  read: EndpointRecord,
  due: Due[],
): Promise<{ endpoint: EndpointRecord; admission: Admission | null; grace: number } | null> {
  const booked = new Set(due.filter((d) => d.message.rate_at !== undefined).map((d) => d.delivery.id));
  // The batch asks for the longest grace one of its deliveries needs (one that missed the usual one).
  const grace = Math.max(START_GRACE_MS, ...due.map((d) => d.message.rate_grace ?? 0));
  let endpoint: EndpointRecord | null = read;
  for (let tries = 0; tries < 3; tries++) {
    if (!endpoint?.enabled) return null;
    // The rate's window counts from this moment, just before the write: its latency is all the grace covers.
    const admission = admit(
      endpoint,
      due.map((d) => d.delivery.id),
      { now: deps.now().getTime(), leaseMs: leaseMs(deps.settings.timeoutMs), token: leaseToken },
      { booked, grace },
    );
    const mustWrite = admission.send.length > 0 || admission.health !== endpoint.health || !!admission.rateTail;
    if (!mustWrite || (await deps.endpoints.admit(endpoint, admission))) return { endpoint, admission, grace };
    endpoint = await deps.endpoints.get(read.shop_id, read.id);
  }
  return endpoint?.enabled ? { endpoint, admission: null, grace } : null;
}

/** A run of an admitted lease; under a rate limit, its request must start within the grace of its admission. */
const runOf = (key: string, lease: Lease, endpoint: EndpointRecord, grace: number): Run => ({
  key,
  lease,
  ended: false,
  ...(endpoint.rate_limit ? { startGrace: grace } : {}),
});

/**
 * Where an admitted delivery goes out: its endpoint, the endpoint's health as this run last
 * knew it, the run whose lease it goes under, and the runway that passes the run's slot on.
 */
interface Slot {
  endpoint: EndpointRecord;
  health: EndpointHealth;
  run: Run;
  runway: Runway<AttemptVerdict>;
}

/**
 * One admitted delivery; whatever fails on the way, the batch's waiting deliveries go back on
 * the queue, and a run that was the last to end still releases what the others carried.
 */
async function attempt(deps: AttemptDeps, due: Due, slot: Slot): Promise<AttemptVerdict> {
  const { endpoint, run, runway } = slot;
  try {
    return await attemptOnce(deps, due, slot);
  } catch (err) {
    runway.flush();
    if (runway.endRun(run)) await deps.ledger.releaseCarried(endpoint, await runway.take()).catch(() => undefined);
    throw err;
  }
}

/** Time a run's lease must have left to take one more delivery: its request, and the write after it. */
const RECORD_MARGIN_MS = 2_000;

async function attemptOnce(deps: AttemptDeps, due: Due, slot: Slot): Promise<AttemptVerdict> {
  const { endpoint, health, run, runway } = slot;
  const { delivery, event } = due;
  const { lease } = run;
  const now = deps.now();
  let result: SendResult | 'late';
  // Under a rate limit the request must start soon after its admission (./rate-window.ts).
  const admittedAt = lease.until - leaseMs(deps.settings.timeoutMs);
  const startBy = run.startGrace === undefined ? Infinity : admittedAt + run.startGrace;
  try {
    result = await send(deps, endpoint, event, now, startBy);
  } catch (err) {
    // Not the receiver's doing (secrets could not be read): free the slot, let the message come back.
    await deps.endpoints.release(endpoint, run.key, lease.token, {
      succeeded: false,
      counted: false,
      opens: false,
      health,
    });
    throw err;
  }
  if (result === 'late') {
    // Not sent, nothing counted: the slot freed, the message back on the queue at once to be admitted
    // afresh, asking for a grace that covers the time this admission took.
    const took = deps.now().getTime() - admittedAt;
    await deps.endpoints.release(endpoint, run.key, lease.token, {
      succeeded: false,
      counted: false,
      opens: false,
      health,
    });
    if (runway.endRun(run)) await deps.ledger.releaseCarried(endpoint, await runway.take());
    return waitForRate(deps, due, deps.now().getTime(), graceAfterLate(took));
  }
  const n = delivery.attempts + 1;
  const outcome = decide(n, result, deps.timeScale);
  const succeeded = outcome.kind === 'succeeded';
  const retryAfterMs = isSlowDown(result.status) ? result.retryAfterMs : null;
  let after = afterAttempt(
    health,
    { succeeded, probe: lease.probe, retryAfterMs, unanswered: result.status === null },
    deps.now().getTime(),
    deps.timeScale,
  );
  if (after.circuit === 'open' && health.circuit === 'closed' && !(await mayOpen(deps, endpoint, run.key, now)))
    after = heldClosed(after, health);
  const next = planNext(deps.scheduler, deps.timeScale, outcome, now, after.circuit !== 'closed');
  const error = result.error ?? (succeeded ? null : `HTTP ${result.status}`);
  const entry: AttemptRecord = {
    attempt: n,
    at: now.toISOString(),
    status: result.status,
    duration_ms: result.durationMs,
    error,
    response_snippet: result.snippet,
  };
  const update = attemptUpdate(outcome, entry, next);

  // A success on a healthy endpoint changes nothing on it: the slot stays ours, for the next
  // delivery waiting in this batch while the runway lasts and the lease covers one more request.
  const steady =
    succeeded &&
    !lease.probe &&
    health.circuit === 'closed' &&
    health.consecutive_failures === 0 &&
    !endpoint.failing_since;
  const following =
    steady && lease.until - deps.now().getTime() >= deps.settings.timeoutMs + RECORD_MARGIN_MS
      ? runway.next()
      : undefined;
  const last = !following && runway.endRun(run);
  if (steady && !last) {
    // The row alone; the slot goes on to `following`, or waits for the last run's write to release it.
    if (!following) runway.carried.slots.push({ key: run.key, token: lease.token });
    const recording = deps.ledger.recordInRun(delivery, update);
    runway.recording(
      recording.then((recorded) => recorded && runway.carried.attempts.push({ entry, status: update.status })),
    );
    let recorded: boolean;
    try {
      recorded = await recording;
    } catch (err) {
      if (following) runway.start(following, runway.giveBack(following));
      throw err;
    }
    if (following) runway.start(following, attempt(deps, following, { ...slot, health: after }));
    if (recorded) await releaseNextInOrder(deps, delivery);
    return recorded ? 'delivered' : 'duplicate';
  }

  const opens = after.circuit === 'open' && (health.circuit !== 'open' || lease.probe);
  const failingSince = succeeded
    ? endpoint.failing_since
      ? null
      : undefined
    : (endpoint.failing_since ?? now.toISOString());
  const change = { succeeded, counted: true, opens, health: after, failingSince };
  const carried = last ? await runway.take() : undefined;
  const { recorded, released } = await deps.ledger.finish({
    delivery,
    update,
    endpoint,
    token: lease.token,
    leaseKey: run.key,
    change,
    carried,
  });
  runway.flush();
  // Deliveries wait for a slot (this success took the mark, or they were pulled): pull them while the
  // runway lasts; past it, hand them back to the queue due now, rather than leave them to their deferral.
  // (Not under a rate limit: its waiting deliveries come back on their own, each admitted in turn.)
  const waiting = succeeded && (released.backlog || runway.pulled) && !endpoint.rate_limit;
  if (waiting)
    runway.ctx.pulled.push(
      Date.now() < runway.ctx.deadline ? pullDue(deps, endpoint, runway.ctx) : requeueDue(deps, endpoint, runway.ctx),
    );
  const before = released.circuitBefore;
  if (!recorded) return 'duplicate';
  if (!next.at) await releaseNextInOrder(deps, delivery);
  if (next.schedule && next.at) await deps.scheduler.schedule(messageOf(delivery, n + 1), next.at);
  if (succeeded) {
    if (before !== null && before !== 'closed') await releaseWaiting(deps, endpoint, delivery.id);
    return 'delivered';
  }
  // A receiver failing is the shop's problem, not ours, but someone watching the logs wants to see it.
  logger.warn('Webhook delivery attempt failed', {
    shop_id: endpoint.shop_id,
    endpoint_id: endpoint.id,
    event_id: event.id,
    delivery_id: delivery.id,
    attempt: n,
    response_status: result.status,
    error,
    duration_ms: result.durationMs,
    next_attempt_at: next.at?.toISOString() ?? null,
  });
  await disableIfDue(deps, endpoint, outcome, [...delivery.history, entry], now);
  return next.at ? 'retry_scheduled' : 'failed';
}

/**
 * This failure would open the circuit by the count the batch read. Read afresh: it opens
 * only if the stored count still makes it the threshold (a success since may have reset
 * it) and no attempt that started before it is unanswered (its success may not be written yet).
 */
async function mayOpen(
  deps: AttemptDeps,
  endpoint: EndpointRecord,
  deliveryId: string,
  startedAt: Date,
): Promise<boolean> {
  const current = await deps.endpoints.get(endpoint.shop_id, endpoint.id).catch(() => null);
  if (!current || current.health.consecutive_failures + 1 < CIRCUIT_THRESHOLD) return false;
  return !olderAttemptUnresolved(
    current.leases,
    deliveryId,
    startedAt.getTime(),
    leaseMs(deps.settings.timeoutMs),
    deps.now().getTime(),
  );
}

/** Due while the circuit is open: the attempt is recorded as not sent and the delivery goes on along its schedule. */
async function recordNotSent(deps: AttemptDeps, due: Due, now: Date): Promise<AttemptVerdict> {
  const { update, next } = notSentAttempt(due.delivery, deps.scheduler, deps.timeScale, now);
  if (!(await deps.deliveries.recordAttempt(due.delivery, update))) return 'duplicate';
  if (!next.at) await releaseNextInOrder(deps, due.delivery);
  if (next.schedule && next.at) await deps.scheduler.schedule(messageOf(due.delivery, update.attempts + 1), next.at);
  return 'circuit_open';
}

/** The endpoint is disabled or gone: the delivery is cancelled, and the next of its resource goes on (to be cancelled in turn, unless enabled again). */
async function cancel(deps: AttemptDeps, delivery: DeliveryRecord): Promise<AttemptVerdict> {
  if (await deps.deliveries.cancel(delivery)) await releaseNextInOrder(deps, delivery);
  return 'cancelled';
}

/**
 * Over the endpoint's in-flight limit: the same message again later, no attempt used. Each
 * wait doubles (with jitter, up to 5 s); behind slow requests it waits until the first of
 * them must have ended, so a hanging receiver's backlog is not churned through the queue
 * ahead of everyone else's deliveries.
 */
async function defer(deps: AttemptDeps, due: Due, now: Date, until: number | null = null): Promise<AttemptVerdict> {
  const deferrals = (due.message.deferrals ?? 0) + 1;
  const at = Math.max(now.getTime() + deferDelayMs(deps.settings.deferMs, deferrals), until ?? 0);
  // A place in the rate line (`rate_at`) is for the rate's own wait: an in-flight deferral gives it up.
  const { rate_at: _place, ...message } = due.message;
  await offFastPath(deps, due, at);
  await deps.scheduler.schedule({ ...message, deferrals }, new Date(at));
  return 'deferred';
}

/**
 * A row put off (a deferral, a long wait for the rate) leaves the fast path: into its endpoint's open
 * deliveries, where a success's pull finds it before its message comes round, and into the due
 * index a grace after that message. One write, at its first deferral only.
 */
async function offFastPath(deps: AttemptDeps, due: Due, at: number): Promise<void> {
  if (due.delivery.sweep_at !== null) return;
  const sweepAt = new Date(at + sweepGraceMs(deps.timeScale));
  await deps.deliveries.index(due.delivery, sweepAt);
  // This batch's later deferrals of it (a runway that gives it back) need not write again.
  due.delivery.sweep_at = sweepAt.toISOString();
}

/** The longest wait for the rate that stays on the fast path. */
const RATE_WAIT_FAST_PATH_MS = 60_000;

export const MAX_DEFER_MS = 5_000;
export function deferDelayMs(base: number, deferrals: number, random = Math.random): number {
  const delay = Math.min(MAX_DEFER_MS, base * 2 ** Math.min(deferrals - 1, 10));
  return Math.round(delay * (0.8 + 0.4 * random()));
}

/**
 * Over the endpoint's rate: the same message when the rate has room, no attempt used, its
 * deferral backoff left as it was; with the longer grace it asks for when it missed its start.
 */
async function waitForRate(deps: AttemptDeps, due: Due, at: number, grace?: number): Promise<AttemptVerdict> {
  // No success pulls a rate-limited endpoint's rows, so a short wait keeps its message as its only
  // wake-up, like a first attempt, and goes back on the queue at once (a write first would eat into
  // its place in line); a long one (a backlog) leaves the fast path, for the sweeper and the stats' count.
  if (at - deps.now().getTime() >= RATE_WAIT_FAST_PATH_MS) await offFastPath(deps, due, at);
  const message = { ...due.message, rate_at: at, ...(grace === undefined ? {} : { rate_grace: grace }) };
  await deps.scheduler.schedule(message, new Date(at));
  return 'deferred';
}

/** The circuit closed: every delivery waiting on it goes out now (the in-flight limit paces them), not at its next offset. */
async function releaseWaiting(deps: AttemptDeps, endpoint: EndpointRecord, exceptId: string): Promise<void> {
  const open = await deps.deliveries.listOpenForEndpoint(endpoint.shop_id, endpoint.id);
  await deps.queue.send(open.filter((d) => d.status === 'retrying' && d.id !== exceptId).map((d) => messageOf(d)));
}

async function send(
  deps: AttemptDeps,
  endpoint: EndpointRecord,
  event: EventRecord,
  now: Date,
  startBy: number,
): Promise<SendResult | 'late'> {
  // The guard runs again before every delivery: DNS may have changed since the endpoint was saved.
  const target = await deps.checkTarget(endpoint.url);
  if (!target.ok)
    return {
      status: null,
      error: `refused target: url ${target.reason}`,
      retryAfterMs: null,
      durationMs: 0,
      snippet: null,
    };
  const body = JSON.stringify(toEventResource(event));
  const headers = signedHeaders(event.id, body, await signingSecrets(deps, endpoint, now), now);
  if (deps.now().getTime() > startBy) return 'late';
  return deps.sender.post(target.url, headers, body);
}
