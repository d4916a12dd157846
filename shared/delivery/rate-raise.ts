import { messageOf, type DeliveryRecord } from './records';
import type { DeliveryQueue } from './records';
import { MAX_RATE_WAIT_MS } from './rate-window';

/**
 * A raised (or removed) `rate_limit` reaches the deliveries already waiting for the old one.
 * They wait on their messages, each due at its place in the old line (a short wait is on no
 * index, so nothing else knows of it): the change writes a raise item in its transaction, and
 * the fan-out, woken by it on the stream, sends each of them a message due now. The new rate
 * admits them as it admits any delivery; their older messages find the attempt done and send
 * nothing. Whatever this misses still wakes at its old place.
 */
export interface RateRaise {
  shop_id: string;
  endpoint_id: string;
  /** When the change was written. */
  at: string;
}

/** The rows that may go now: never attempted and not held behind an earlier event, or retrying and due. */
export interface RateWaitingRows {
  listWaitingForRate(shopId: string, endpointId: string, range: { since: Date; now: Date }): Promise<DeliveryRecord[]>;
}

export interface RateRaiseDeps {
  deliveries: RateWaitingRows;
  queue: DeliveryQueue;
}

/** How far back a delivery waiting on the fast path may have been made: its longest wait, and a minute more. */
const WAITING_SINCE_MS = MAX_RATE_WAIT_MS + 60_000;

export async function wakeRateWaiting(deps: RateRaiseDeps, raise: RateRaise): Promise<number> {
  const now = new Date(raise.at);
  const waiting = await deps.deliveries.listWaitingForRate(raise.shop_id, raise.endpoint_id, {
    since: new Date(now.getTime() - WAITING_SINCE_MS),
    now,
  });
  await deps.queue.send(waiting.map((d) => messageOf(d)));
  return waiting.length;
}
