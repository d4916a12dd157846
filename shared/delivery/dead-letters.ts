import type { DeliveryMessage } from './records';

/** A message the delivery queue gave up on (received too often), as its dead-letter queue holds it. */
export interface DeadLetteredDelivery {
  /** What removes it from the dead-letter queue. */
  receipt: string;
  /** The delivery it names; null when the body is not a delivery message (left for an operator). */
  message: Pick<DeliveryMessage, 'shop_id' | 'event_id' | 'delivery_id' | 'endpoint_id'> | null;
}

export interface DeliveryDeadLetters {
  /** Up to ten of its messages, hidden from other readers for a while. */
  receive(): Promise<DeadLetteredDelivery[]>;
  remove(receipts: string[]): Promise<void>;
}

export interface DrainDeps {
  /** Absent: no dead-letter queue to drain (a pipeline set up without one). */
  deadLetters?: DeliveryDeadLetters;
  /** Takes a fast-path row into the due index at `sweepAt`; false when it is there already or ended. */
  due: {
    enter(ref: { shop_id: string; event_id: string; id: string; endpoint_id: string }, sweepAt: Date): Promise<unknown>;
  };
  now: () => Date;
}

/** Receives a run takes at most (ten messages each), and the time it starts none after. */
const MAX_RECEIVES = 50;
const BUDGET_MS = 20_000;

/**
 * A fan-out row on its fast path is in no index: its message is its only wake-up. A message
 * the consumer failed on five times moves to the delivery dead-letter queue; each one names its
 * row, which goes into the due index (due now, so this sweep or the next sends it with its
 * usual conditions), and only then is the message removed. A row that ended, or is in the index
 * already, needs nothing. A body that names no delivery stays for an operator. Returns how many
 * messages were handled.
 */
export async function drainDeadLetters(deps: DrainDeps): Promise<number> {
  if (!deps.deadLetters) return 0;
  const started = Date.now();
  let handled = 0;
  for (let receives = 0; receives < MAX_RECEIVES && Date.now() - started < BUDGET_MS; receives++) {
    const letters = await deps.deadLetters.receive();
    if (letters.length === 0) break;
    const done: string[] = [];
    await Promise.all(
      letters.map(async ({ receipt, message }) => {
        if (!message) return;
        await deps.due.enter(
          {
            shop_id: message.shop_id,
            event_id: message.event_id,
            id: message.delivery_id,
            endpoint_id: message.endpoint_id,
          },
          deps.now(),
        );
        done.push(receipt);
      }),
    );
    if (done.length > 0) await deps.deadLetters.remove(done);
    handled += done.length;
  }
  return handled;
}

/** The delivery a dead-lettered body names, if it is a delivery message. */
export function deadLetteredMessage(body: string): DeadLetteredDelivery['message'] {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const ids = [parsed.shop_id, parsed.event_id, parsed.delivery_id, parsed.endpoint_id];
    if (!ids.every((id) => typeof id === 'string' && id.length > 0)) return null;
    const [shop_id, event_id, delivery_id, endpoint_id] = ids as string[];
    return { shop_id, event_id, delivery_id, endpoint_id } as DeadLetteredDelivery['message'];
  } catch {
    return null;
  }
}
