/** What became of one delivery of a batch; each is counted as its own metric (../observability/delivery-metrics.ts). */
export type AttemptVerdict =
  /** Sent, and answered 2xx. */
  | 'delivered'
  /** Sent, failed, and its next attempt is planned. */
  | 'retry_scheduled'
  /** Sent, and failed for good (its 8th attempt, or a 410). */
  | 'failed'
  /** Due while the circuit is open: recorded as an attempt, not sent. */
  | 'circuit_open'
  /** Over the in-flight limit (or carried by another batch): back on the queue shortly, no attempt used. */
  | 'deferred'
  /** Over the endpoint's rate: back on the queue when the rate has room, no attempt used. */
  | 'waiting_for_rate'
  /** Pulled from the table and not taken: it stays due on its row. */
  | 'left_due'
  /** Another worker is attempting it: back on the queue when that worker's lease ends. */
  | 'in_flight'
  /** The endpoint is disabled or gone. */
  | 'cancelled'
  /** The attempt this message asks for is done, ended or held: nothing sent. */
  | 'duplicate'
  /** Its row or event is gone. */
  | 'missing';

/**
 * The verdicts of one endpoint's deliveries. One can fail before the batch reads it (its write
 * failed while other endpoints were still being admitted): each is marked handled as it is set,
 * so the process does not die of an unhandled rejection, and the batch still reports it.
 */
export class Verdicts extends Map<string, Promise<AttemptVerdict>> {
  override set(deliveryId: string, verdict: Promise<AttemptVerdict>): this {
    verdict.catch(() => undefined);
    return super.set(deliveryId, verdict);
  }
}
