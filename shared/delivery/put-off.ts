import { sweepGraceMs } from './policy';
import { notSentAttempt, type NextAttempt } from './attempt-plan';
import { messageOf, type DeliveryRecord } from './records';
import type { AttemptDeps } from './ports';
import type { Due } from './runway';
import type { AttemptVerdict } from './attempt-verdict';
import { releaseNextInOrder } from './resource-order';

/**
 * The actions of a batch that send nothing (./endpoint-plan.ts): a delivery is cancelled,
 * recorded as not sent, or put back on the queue with the wait its reason asks for. None
 * uses an attempt but `circuit_open`, which is recorded as one.
 */

/**
 * After an attempt is recorded: a delivery that ended lets the next of its resource go
 * (./resource-order.ts); one that goes on is woken at its next attempt's time.
 */
export async function followUp(deps: AttemptDeps, delivery: DeliveryRecord, nextAttempt: number, next: NextAttempt) {
  if (!next.at) await releaseNextInOrder(deps, delivery);
  else if (next.schedule) await deps.scheduler.schedule(messageOf(delivery, nextAttempt), next.at);
}

/** Due while the circuit is open: the attempt is recorded as not sent and the delivery goes on along its schedule. */
export async function recordNotSent(deps: AttemptDeps, due: Due, now: Date): Promise<AttemptVerdict> {
  const { update, next } = notSentAttempt(due.delivery, deps.scheduler, deps.timeScale, now);
  if (!(await deps.deliveries.recordAttempt(due.delivery, update))) return 'duplicate';
  await followUp(deps, due.delivery, update.attempts + 1, next);
  return 'circuit_open';
}

/**
 * The endpoint is disabled or gone: the delivery is cancelled, and the next of its resource goes on
 * (to be cancelled in turn, unless enabled again).
 */
export async function cancel(deps: AttemptDeps, delivery: DeliveryRecord): Promise<AttemptVerdict> {
  if (await deps.deliveries.cancel(delivery)) await releaseNextInOrder(deps, delivery);
  return 'cancelled';
}

/**
 * Over the endpoint's in-flight limit: the same message again later, no attempt used. Each
 * wait doubles (with jitter, up to 5 s); behind slow requests it waits until the first of
 * them must have ended, so a hanging receiver's backlog is not churned through the queue
 * ahead of everyone else's deliveries.
 */
export async function defer(deps: AttemptDeps, due: Due, now: Date, until: number | null): Promise<AttemptVerdict> {
  const deferrals = (due.message.deferrals ?? 0) + 1;
  const at = Math.max(now.getTime() + deferDelayMs(deps.settings.deferMs, deferrals), until ?? 0);
  // A place in the rate line (`rate_at`) is for the rate's own wait: an in-flight deferral gives it up.
  const { rate_at: _place, ...message } = due.message;
  await offFastPath(deps, due, at);
  await deps.scheduler.schedule({ ...message, deferrals }, new Date(at));
  return 'deferred';
}

/**
 * A duplicate of a message whose delivery another worker is attempting: it comes back when
 * that worker's lease ends. Acknowledged at once, it could take the only wake-up of a row on
 * its fast path with it, should that worker die before it records the attempt.
 */
export async function afterLease(
  deps: AttemptDeps,
  due: Due,
  now: Date,
  until: number | null,
): Promise<AttemptVerdict> {
  await defer(deps, due, now, until);
  return 'in_flight';
}

export const MAX_DEFER_MS = 5_000;
export function deferDelayMs(base: number, deferrals: number, random = Math.random): number {
  const delay = Math.min(MAX_DEFER_MS, base * 2 ** Math.min(deferrals - 1, 10));
  return Math.round(delay * (0.8 + 0.4 * random()));
}

/** The longest wait for the rate that stays on the fast path. */
const RATE_WAIT_FAST_PATH_MS = 60_000;

/**
 * Over the endpoint's rate: the same message when the rate has room, no attempt used, its
 * deferral backoff left as it was; with the longer grace it asks for when it missed its start.
 */
export async function waitForRate(deps: AttemptDeps, due: Due, at: number, grace?: number): Promise<AttemptVerdict> {
  // A short wait keeps its message as its only wake-up, like a first attempt, and goes back on the
  // queue at once (a write first would eat into its place in line); a long one (a backlog) leaves the
  // fast path, for the sweeper and the stats' count.
  if (at - deps.now().getTime() >= RATE_WAIT_FAST_PATH_MS) await offFastPath(deps, due, at);
  const message = { ...due.message, rate_at: at, ...(grace === undefined ? {} : { rate_grace: grace }) };
  await deps.scheduler.schedule(message, new Date(at));
  return 'waiting_for_rate';
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
