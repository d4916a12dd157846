import { logger } from '../logger';
import { graceAfterLate, START_GRACE_MS } from './rate-window';
import { afterAttempt, CIRCUIT_THRESHOLD, keptClosed, olderAttemptUnresolved, type EndpointHealth } from './circuit';
import { decide, isSlowDown, type Outcome } from './policy';
import { attemptUpdate, planNext, type NextAttempt } from './attempt-plan';
import type { SendResult } from './sender';
import { signedHeaders } from './signer';
import { messageOf, type AttemptRecord } from './records';
import type { AttemptDeps, AttemptUpdate } from './ports';
import type { Due, Run, Runway } from './runway';
import type { AttemptVerdict } from './attempt-verdict';
import { disableIfDue } from './endpoint-failure';
import { releaseNextInOrder } from './resource-order';
import { followUp, waitForRate } from './put-off';
import { toEventResource, type EventRecord } from '../domain/events';
import { signingSecrets, type EndpointRecord } from '../domain/webhook-endpoints';

/**
 * A lease outlives the request it covers by the time to read and record around it, and by the
 * start grace beyond the usual one that a rate-limited request may take (./rate-window.ts).
 */
export const leaseMs = (timeoutMs: number, grace = START_GRACE_MS) =>
  timeoutMs + 5_000 + Math.max(0, grace - START_GRACE_MS);

/**
 * Time a request needs after its timeout for the write that records it: a run's lease, and the
 * invocation, must have its timeout and this left to start one more.
 */
const RECORD_MARGIN_MS = 2_000;

/** One admitted delivery, its endpoint as admitted on, and the run whose slot it uses. */
export interface Turn {
  endpoint: EndpointRecord;
  /** The endpoint's health as this turn found it (the previous turn's outcome, in a run). */
  health: EndpointHealth;
  due: Due;
  run: Run;
  runway: Runway<AttemptVerdict>;
}

/** What an attempt's answer means, before anything is written. */
interface Judged {
  result: SendResult;
  /** When the attempt started. */
  at: Date;
  n: number;
  outcome: Outcome;
  succeeded: boolean;
  after: EndpointHealth;
  next: NextAttempt;
  entry: AttemptRecord;
  update: AttemptUpdate;
}

/**
 * One admitted delivery, in stages (svix's worker: prepare, call, handle the outcome): send
 * it, judge the answer, record it (the row alone while the run goes on, or the row and the
 * endpoint's slot), then follow up. Whatever fails on the way, the batch's waiting deliveries
 * go back on the queue, and a run that was the last to end still releases what the others carried.
 */
export async function attempt(deps: AttemptDeps, turn: Turn): Promise<AttemptVerdict> {
  const { endpoint, run, runway } = turn;
  try {
    const now = deps.now();
    const result = await sendOrFree(deps, turn, now);
    if (result === 'late') return await tooLate(deps, turn);
    if (result === 'out_of_time') return await outOfTime(deps, turn);
    const judged = await judge(deps, turn, result, now);
    const steady = isSteady(turn, judged);
    const following = steady ? nextInRun(deps, turn) : undefined;
    const last = !following && runway.endRun(run);
    if (steady && !last) return await recordInRun(deps, turn, judged, following);
    return await recordAndRelease(deps, turn, judged, last);
  } catch (err) {
    runway.flush();
    if (runway.endRun(run)) await deps.ledger.releaseCarried(endpoint, await runway.take()).catch(() => undefined);
    throw err;
  }
}

/** The request; when it cannot be made (secrets unreadable), the slot is freed, uncounted, and the error goes up. */
async function sendOrFree(deps: AttemptDeps, turn: Turn, now: Date): Promise<SendResult | NotStarted> {
  const { endpoint, run, health } = turn;
  try {
    return await send(deps, endpoint, turn.due.event, now, { rate: startBy(run), invocation: lastStart(deps, turn) });
  } catch (err) {
    // Not the receiver's doing: free the slot, let the message come back.
    const change = { succeeded: false, counted: false, opens: false, health };
    await deps.endpoints.release(endpoint, run.key, run.lease.token, change);
    throw err;
  }
}

/** Under a rate limit the request must start soon after its admission (./rate-window.ts). */
const startBy = (run: Run) => (run.startGrace === undefined ? Infinity : run.lease.taken + run.startGrace);

/**
 * The last moment (on `Date.now()`'s clock, as the invocation's end is) a request may start
 * and still end, and be recorded, before Lambda cuts the invocation off.
 */
const lastStart = (deps: AttemptDeps, { runway }: Turn) =>
  runway.ctx.endsAt - deps.settings.timeoutMs - RECORD_MARGIN_MS;

/** Why a request was not made: too late for its rate's grace, or for what is left of the invocation. */
type NotStarted = 'late' | 'out_of_time';

/**
 * Its start came too late for the rate: not sent, nothing counted, the slot freed, and the
 * message back on the queue at once to be admitted afresh, asking for a grace that covers
 * the time this admission took.
 */
async function tooLate(deps: AttemptDeps, turn: Turn): Promise<AttemptVerdict> {
  const { endpoint, run, runway, health } = turn;
  const took = deps.now().getTime() - run.lease.taken;
  const change = { succeeded: false, counted: false, opens: false, health };
  await deps.endpoints.release(endpoint, run.key, run.lease.token, change);
  if (runway.endRun(run)) await deps.ledger.releaseCarried(endpoint, await runway.take());
  return waitForRate(deps, turn.due, deps.now().getTime(), graceAfterLate(took));
}

/**
 * Too little of the invocation is left for the request's whole timeout and its record: not
 * sent, nothing counted, the slot freed, and the delivery given back with those waiting in the
 * run (on the queue, or left due on its row) for an invocation that has the time.
 */
async function outOfTime(deps: AttemptDeps, turn: Turn): Promise<AttemptVerdict> {
  const { endpoint, run, runway, health } = turn;
  runway.flush();
  const change = { succeeded: false, counted: false, opens: false, health };
  await deps.endpoints.release(endpoint, run.key, run.lease.token, change);
  if (runway.endRun(run)) await deps.ledger.releaseCarried(endpoint, await runway.take());
  return runway.giveBack(turn.due);
}

/** The answer, judged: the row's update, the endpoint's health after it, and when the next attempt runs. */
async function judge(deps: AttemptDeps, turn: Turn, result: SendResult, now: Date): Promise<Judged> {
  const { endpoint, health, run } = turn;
  const n = turn.due.delivery.attempts + 1;
  const outcome = decide(n, result, deps.timeScale);
  const succeeded = outcome.kind === 'succeeded';
  const retryAfterMs = isSlowDown(result.status) ? result.retryAfterMs : null;
  const answer = { succeeded, probe: run.lease.probe, retryAfterMs, unanswered: result.status === null };
  let after = afterAttempt(health, answer, deps.now().getTime(), deps.timeScale);
  if (after.circuit === 'open' && health.circuit === 'closed' && !(await mayOpen(deps, endpoint, run.key, now)))
    after = keptClosed(after, health);
  const next = planNext(deps.scheduler, deps.timeScale, outcome, now, after.circuit !== 'closed');
  const entry: AttemptRecord = {
    attempt: n,
    at: now.toISOString(),
    status: result.status,
    duration_ms: result.durationMs,
    error: result.error ?? (succeeded ? null : `HTTP ${result.status}`),
    response_snippet: result.snippet,
  };
  return { result, at: now, n, outcome, succeeded, after, next, entry, update: attemptUpdate(outcome, entry, next) };
}

/** A success on a healthy endpoint changes nothing on it: the slot may stay in the run. */
function isSteady({ endpoint, health, run }: Turn, { succeeded }: Judged): boolean {
  const healthy = health.circuit === 'closed' && health.consecutive_failures === 0 && !endpoint.failing_since;
  return succeeded && !run.lease.probe && healthy;
}

/**
 * The next delivery waiting in this batch, while the runway lasts and both the lease and the
 * invocation cover one more request.
 */
function nextInRun(deps: AttemptDeps, turn: Turn): Due | undefined {
  const leaseLeft = turn.run.lease.until - deps.now().getTime();
  const fits = leaseLeft >= deps.settings.timeoutMs + RECORD_MARGIN_MS && Date.now() <= lastStart(deps, turn);
  return fits ? turn.runway.next() : undefined;
}

/**
 * The row alone; the slot goes on to `following`, or waits for the last run's write to
 * release it with the attempts the runs recorded (one endpoint write per batch).
 */
async function recordInRun(
  deps: AttemptDeps,
  turn: Turn,
  judged: Judged,
  following: Due | undefined,
): Promise<AttemptVerdict> {
  const { due, run, runway } = turn;
  const { entry, update } = judged;
  if (!following) runway.carried.slots.push({ key: run.key, token: run.lease.token });
  const recording = deps.ledger.recordInRun(due.delivery, update);
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
  if (following) runway.start(following, attempt(deps, { ...turn, health: judged.after, due: following }));
  if (!recorded) return 'duplicate';
  await releaseNextInOrder(deps, due.delivery);
  return 'delivered';
}

/** The row and the endpoint's slot in one write (with what the batch's runs carried, when this run is the `last`). */
async function recordAndRelease(deps: AttemptDeps, turn: Turn, judged: Judged, last: boolean): Promise<AttemptVerdict> {
  const { endpoint, due, run, runway, health } = turn;
  const { succeeded, after, next, update, n } = judged;
  const opens = after.circuit === 'open' && (health.circuit !== 'open' || run.lease.probe);
  const change = { succeeded, counted: true, opens, health: after, failingSince: failingSince(turn, judged) };
  const carried = last ? await runway.take() : undefined;
  const { recorded, released } = await deps.ledger.finish({
    delivery: due.delivery,
    update,
    endpoint,
    token: run.lease.token,
    leaseKey: run.key,
    change,
    carried,
  });
  runway.flush();
  // Deliveries wait for a slot (this success took the backlog mark, or they were pulled): the batch
  // takes them, within the endpoint's rate if it has one (./admit-endpoint.ts).
  if (succeeded && (released.backlog || runway.source === 'table')) runway.ctx.pull(endpoint);
  if (!recorded) return 'duplicate';
  await followUp(deps, due.delivery, n + 1, next);
  if (succeeded) {
    const before = released.circuitBefore;
    if (before !== null && before !== 'closed') await releaseWaiting(deps, endpoint, due.delivery.id);
    return 'delivered';
  }
  logFailure(turn, judged);
  await disableIfDue(deps, endpoint, judged.outcome, [...due.delivery.history, judged.entry]);
  return next.at ? 'retry_scheduled' : 'failed';
}

/**
 * When the endpoint's failures began: cleared by a success (null), kept, set by a first failure;
 * undefined leaves it.
 */
function failingSince({ endpoint }: Turn, { succeeded, at }: Judged): string | null | undefined {
  if (succeeded) return endpoint.failing_since ? null : undefined;
  return endpoint.failing_since ?? at.toISOString();
}

/** A receiver failing is the shop's problem, not ours, but someone watching the logs wants to see it. */
function logFailure({ endpoint, due }: Turn, { n, entry, next, result }: Judged): void {
  logger.warn('Webhook delivery attempt failed', {
    shop_id: endpoint.shop_id,
    endpoint_id: endpoint.id,
    event_id: due.event.id,
    delivery_id: due.delivery.id,
    attempt: n,
    response_status: result.status,
    error: entry.error,
    duration_ms: result.durationMs,
    next_attempt_at: next.at?.toISOString() ?? null,
  });
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
  return !olderAttemptUnresolved(current.leases, deliveryId, startedAt.getTime(), deps.now().getTime());
}

/**
 * The circuit closed: every delivery waiting on it goes out now (the in-flight limit paces them),
 * not at its next offset.
 */
async function releaseWaiting(deps: AttemptDeps, endpoint: EndpointRecord, exceptId: string): Promise<void> {
  const open = await deps.deliveries.listOpenForEndpoint(endpoint.shop_id, endpoint.id);
  const retrying = open.filter((d) => d.status === 'retrying' && d.id !== exceptId);
  await deps.queue.send(retrying.map((d) => messageOf(d)));
}

async function send(
  deps: AttemptDeps,
  endpoint: EndpointRecord,
  event: EventRecord,
  now: Date,
  startBy: { rate: number; invocation: number },
): Promise<SendResult | NotStarted> {
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
  if (deps.now().getTime() > startBy.rate) return 'late';
  if (Date.now() > startBy.invocation) return 'out_of_time';
  return deps.sender.post(target.url, headers, body);
}
