import type { Rng } from '../lib/local/rng';

/**
 * How often each thing AWS may do happens in a run. Drawn from the seed per run: some runs
 * are calm, some are storms, so both the common path and the rare interleavings are tried.
 */
export interface FaultRates {
  /** Per table request: refused before the write (throttled, or a 500). */
  tableRefused: number;
  /** Per table write: committed, and the answer lost (the caller sees an error). */
  tableAnswerLost: number;
  /** Per transaction: cancelled by a conflicting one. */
  tableConflict: number;
  /** Per Lambda invocation: killed at one of its awaits. */
  kill: number;
  /** Per queue receive of a message: it stays visible, so another receive gets it too. */
  queueDuplicate: number;
  /** Per message sent: it shows up to a few seconds late. */
  queueLate: number;
  /** Per delete: the delete is lost and the message comes back after its visibility timeout. */
  queueDeleteLost: number;
  /** Per stream batch that succeeded: it runs again (a timeout after the work was done). */
  streamTwice: number;
  /** Per EventBridge schedule: it fires twice. */
  scheduleTwice: number;
}

export const CALM: FaultRates = {
  tableRefused: 0,
  tableAnswerLost: 0,
  tableConflict: 0,
  kill: 0,
  queueDuplicate: 0,
  queueLate: 0,
  queueDeleteLost: 0,
  streamTwice: 0,
  scheduleTwice: 0,
};

/** A run's rates: calm, light or stormy, each fault on or off on its own. */
export function drawFaults(rng: Rng): FaultRates {
  const level = rng.pick([0, 0.02, 0.05, 0.12]);
  const on = () => (rng.chance(0.6) ? level : 0);
  return {
    tableRefused: on() / 2,
    tableAnswerLost: on() / 2,
    tableConflict: on(),
    kill: on(),
    queueDuplicate: on(),
    queueLate: on(),
    queueDeleteLost: on(),
    streamTwice: on() * 2,
    scheduleTwice: on() * 2,
  };
}
