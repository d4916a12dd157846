import type { Admission, Lease } from './circuit';

/**
 * Where a batch's deliveries came from: queue messages (each its own wake-up, which a
 * delivery not sent now is put back as), or the table (pulled for a freed slot: each keeps
 * the wake-ups it has, so one not taken now is simply left due).
 */
export type Source = 'queue' | 'table';

/** What one due delivery of an endpoint does in this batch: exactly one of these. */
export type Action =
  /** Sent now, under its lease. */
  | { kind: 'send'; deliveryId: string; lease: Lease }
  /** Due while the circuit is open: recorded as a `circuit_open` attempt, not sent. */
  | { kind: 'record-not-sent'; deliveryId: string }
  /** Over the in-flight limit: back on the queue shortly, or not before `until` (requests that look stuck). */
  | { kind: 'defer'; deliveryId: string; until: number | null }
  /** Over the rate: back on the queue when the rate has room. */
  | { kind: 'wait-for-rate'; deliveryId: string; at: number }
  /** The endpoint is disabled or gone. */
  | { kind: 'cancel'; deliveryId: string }
  /** Another worker's lease covers it (a duplicate message): it comes back when that lease ends. */
  | { kind: 'in-flight'; deliveryId: string; until: number | null }
  /** Carried: it waits in this batch for a slot one of its runs frees (./runway.ts). */
  | { kind: 'wait-in-run'; deliveryId: string }
  /** Pulled from the table and not taken: it stays due on its row. */
  | { kind: 'leave-due'; deliveryId: string };

export interface EndpointPlan {
  actions: Action[];
  /**
   * Deliveries of a healthy endpoint go back on the queue for a slot: mark the endpoint, so
   * the next success pulls them from the table rather than leave them to their deferral.
   */
  markBacklog: boolean;
}

/**
 * The admission as written: null when the endpoint is disabled or gone; `admission` null when every
 * try lost its race.
 */
export type Admitted = { admission: Admission | null; backlogMarked: boolean } | null;

/**
 * Turns an endpoint's admission into one action per due delivery. Pure: what it decides is
 * carried out by the batch (./deliver-batch.ts). A delivery that is not sent goes back as
 * it came: a queue message is put back on the queue with the wait its reason asks for; a row
 * pulled from the table is left due.
 */
export function planEndpoint(deliveryIds: string[], admitted: Admitted, source: Source): EndpointPlan {
  if (!admitted)
    return { actions: deliveryIds.map((deliveryId) => ({ kind: 'cancel', deliveryId })), markBacklog: false };
  const { admission } = admitted;
  const putBack = (deliveryId: string, wait: Action): Action =>
    source === 'table' ? { kind: 'leave-due', deliveryId } : wait;
  if (!admission) {
    const actions = deliveryIds.map((deliveryId) => putBack(deliveryId, { kind: 'defer', deliveryId, until: null }));
    return { actions, markBacklog: false };
  }
  // A healthy endpoint's batch keeps what is over its limit for its own runs' slots (written as carried).
  const inRuns = admission.carry.length > 0;
  const actions: Action[] = [
    ...admission.send.map(({ deliveryId, lease }): Action => ({ kind: 'send', deliveryId, lease })),
    ...admission.circuitOpen.map((deliveryId): Action => ({ kind: 'record-not-sent', deliveryId })),
    ...admission.defer.map((deliveryId): Action =>
      inRuns
        ? { kind: 'wait-in-run', deliveryId }
        : putBack(deliveryId, { kind: 'defer', deliveryId, until: admission.deferUntil }),
    ),
    ...(admission.rateLimited ?? []).map(({ deliveryId, at }): Action =>
      putBack(deliveryId, { kind: 'wait-for-rate', deliveryId, at }),
    ),
    ...admission.inFlight.map((deliveryId): Action =>
      putBack(deliveryId, { kind: 'in-flight', deliveryId, until: admission.inFlightUntil }),
    ),
    // Carried by another batch's runs, which may give it back: it waits like a deferral.
    ...admission.elsewhere.map((deliveryId): Action => putBack(deliveryId, { kind: 'defer', deliveryId, until: null })),
  ];
  const healthy = admission.health.circuit === 'closed' && admission.health.consecutive_failures === 0;
  const backOnQueue = actions.some((a) => a.kind === 'defer' && admission.defer.includes(a.deliveryId));
  return { actions, markBacklog: backOnQueue && healthy && !admitted.backlogMarked };
}
