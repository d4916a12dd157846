/**
 * Delivery policy as pure functions (after svix's worker): what an attempt's result means
 * and when the next attempt runs. Every number comes from the contract.
 */
export const RETRY_SCHEDULE_MS = [1, 5, 30, 120, 360, 720, 1440].map((minutes) => minutes * 60_000);
/** Attempt 1 is immediate, then one per scheduled retry. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;
export const AUTO_DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000;
export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * A delivery over its endpoint's in-flight limit goes back on the queue for this long (SQS delays
 * are whole seconds).
 */
export const DEFAULT_DEFER_MS = 1_000;
/** How long the previous signing secret stays valid after a rotation. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface AttemptResult {
  /** HTTP status, when a response arrived. */
  status: number | null;
  /** Why no usable response arrived (timeout, connection refused, refused target…). */
  error: string | null;
  /** Retry-After of the answer, in milliseconds (honoured on the slow-down statuses only). */
  retryAfterMs: number | null;
}

export type Outcome =
  { kind: 'succeeded' } | { kind: 'retry'; delayMs: number } | { kind: 'failed' } | { kind: 'gone' };

/** The statuses by which a receiver asks senders to slow down (Standard Webhooks). */
export const SLOW_DOWN_STATUSES: readonly number[] = [429, 502, 503, 504];
export const isSlowDown = (status: number | null): boolean => status !== null && SLOW_DOWN_STATUSES.includes(status);

/** Whether the receiver accepted the request: any 2xx. */
export const isAccepted = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** 2xx succeeds; 410 disables the endpoint; anything else (3xx included: redirects are not followed) fails. */
export function decide(attempt: number, result: AttemptResult, timeScale = 1): Outcome {
  if (isAccepted(result.status)) return { kind: 'succeeded' };
  if (result.status === 410) return { kind: 'gone' };
  if (attempt >= MAX_ATTEMPTS) return { kind: 'failed' };
  const scheduled = (RETRY_SCHEDULE_MS[attempt - 1] as number) * timeScale;
  const honoured = isSlowDown(result.status) ? result.retryAfterMs : null;
  // A receiver may ask for more time, up to twice the scheduled delay; never for less.
  const delayMs = honoured === null ? scheduled : Math.min(Math.max(scheduled, honoured), 2 * scheduled);
  return { kind: 'retry', delayMs };
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** An endpoint failing with no success since `failingSince` for 3 (scaled) days is disabled on its next failure. */
export function shouldDisable(failingSince: string | null, now: number, timeScale = 1): boolean {
  return failingSince !== null && now - Date.parse(failingSince) >= AUTO_DISABLE_AFTER_MS * timeScale;
}

/**
 * How late a delivery woken by a queue message or a schedule may be before the sweeper
 * sends it anyway: the normal path takes milliseconds, so a row this far past due has
 * lost its message (a crash, a stop of the local stack). Scaled, but never below 1 s: on
 * a fast test clock a shorter grace lets the sweeper send a first attempt again while a
 * busy machine is still making it, and the receiver gets the event twice.
 */
export const SWEEP_GRACE_MS = 60_000;
export const sweepGraceMs = (timeScale: number): number => Math.max(1_000, SWEEP_GRACE_MS * timeScale);
