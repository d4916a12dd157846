import { decide, sweepGraceMs, type Outcome } from './policy';
import type { AttemptRecord, DeliveryRecord } from './records';
import type { AttemptUpdate, RetryScheduler } from './ports';

/** `last_error` of an attempt that fell due while the endpoint's circuit was open: recorded, not sent. */
export const CIRCUIT_OPEN = 'circuit_open';

/**
 * When the next attempt runs; `schedule`: a queue delay or schedule wakes it (else the sweeper
 * alone, at `sweepAt`).
 */
export interface NextAttempt {
  at: Date | null;
  sweepAt: Date | null;
  schedule: boolean;
}

/**
 * When the next attempt runs and what wakes it: a queue delay or a schedule, with the
 * sweeper as the safety net after a grace; while the circuit is open, the sweeper alone
 * (no per-delivery schedule) once the delay is past what the queue can hold.
 */
export function planNext(
  scheduler: Pick<RetryScheduler, 'needsSchedule'>,
  timeScale: number,
  outcome: Outcome,
  now: Date,
  circuitOpen: boolean,
): NextAttempt {
  if (outcome.kind !== 'retry') return { at: null, sweepAt: null, schedule: false };
  const at = new Date(now.getTime() + outcome.delayMs);
  const bySweeper = circuitOpen && scheduler.needsSchedule(outcome.delayMs);
  return { at, sweepAt: new Date(at.getTime() + (bySweeper ? 0 : sweepGraceMs(timeScale))), schedule: !bySweeper };
}

const STATUS_OF = { succeeded: 'succeeded', retry: 'retrying', failed: 'failed', gone: 'failed' } as const;

export function attemptUpdate(
  outcome: Outcome,
  entry: AttemptRecord,
  next: Pick<NextAttempt, 'at' | 'sweepAt'>,
): AttemptUpdate {
  return {
    status: STATUS_OF[outcome.kind],
    attempts: entry.attempt,
    last_attempt_at: entry.at,
    next_attempt_at: next.at?.toISOString() ?? null,
    sweep_at: next.sweepAt?.toISOString() ?? null,
    last_response_status: entry.status,
    last_error: entry.error,
    entry,
  };
}

/**
 * The delivery's next attempt, due now while its endpoint's circuit is open: recorded as not sent,
 * and when the one after runs.
 */
export function notSentAttempt(
  delivery: DeliveryRecord,
  scheduler: Pick<RetryScheduler, 'needsSchedule'>,
  timeScale: number,
  now: Date,
): { update: AttemptUpdate; next: NextAttempt } {
  const n = delivery.attempts + 1;
  const outcome = decide(n, { status: null, error: CIRCUIT_OPEN, retryAfterMs: null }, timeScale);
  const next = planNext(scheduler, timeScale, outcome, now, true);
  const entry: AttemptRecord = {
    attempt: n,
    at: now.toISOString(),
    status: null,
    duration_ms: 0,
    error: CIRCUIT_OPEN,
    response_snippet: null,
  };
  return { update: attemptUpdate(outcome, entry, next), next };
}

/** The row as it reads once the update is recorded (what the conditional write makes of it). */
export function withAttempt(delivery: DeliveryRecord, u: AttemptUpdate): DeliveryRecord {
  return {
    ...delivery,
    status: u.status,
    attempts: u.attempts,
    last_attempt_at: u.last_attempt_at,
    next_attempt_at: u.next_attempt_at,
    sweep_at: u.sweep_at,
    last_response_status: u.last_response_status,
    last_error: u.last_error,
    history: [...delivery.history, u.entry],
  };
}
