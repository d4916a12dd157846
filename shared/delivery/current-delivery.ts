import { newId } from '../ids';
import { newDelivery } from './fan-out';
import { type DeliveryRecord } from './records';
import { isAccepted } from './policy';
import { isOpenStatus } from './status';
import type { EventRecord } from '../domain/events';

/**
 * Redeliver and recover under concurrency. Each event and endpoint has at most one *current*
 * delivery made by a redeliver or recover, named by a marker item. A request that queues the
 * event again writes its row, moves the marker from the delivery it read to its row, and
 * cancels the open deliveries it replaces, in one transaction: of requests that read the same
 * marker exactly one wins; the others read again and find the winner's row. So the marker's
 * row is never cancelled by a request (only by the endpoint's disabling, or it ends by being
 * sent), and every other open row of the pair was cancelled by the transaction that replaced
 * it. A delivery not attempted yet is left to go out: the request takes it as its own rather
 * than replace it, because its first attempt may be under way at this moment and would arrive
 * alongside the new one.
 *
 * A caller that queues an event at most once, though it may run twice (a recovery's page), names
 * its row (`id`): the row is written only if absent, and a run that reads it takes it as its own
 * rather than supersede it once attempted. A run that read before the other wrote reads again,
 * since the other's write moved the marker, and finds it then.
 */

/** What one strongly consistent read of an event's deliveries shows. */
export interface EventDeliveries {
  rows: DeliveryRecord[];
  /** Per endpoint id, the delivery its marker names (absent: no redeliver or recover yet). */
  current: ReadonlyMap<string, string>;
}

export interface CurrentDeliveryStore {
  /** The event's deliveries to these endpoints, and their markers. */
  ofEvent(shopId: string, eventId: string, endpointIds: readonly string[]): Promise<EventDeliveries>;
  /** The same for several events and one endpoint, each read as `ofEvent` would (in one go: a recovery's step). */
  ofEvents(shopId: string, eventIds: readonly string[], endpointId: string): Promise<Map<string, EventDeliveries>>;
  /**
   * All or nothing: writes `row` and makes it the current delivery of its event to its
   * endpoint, only if the marker still names `expected` (null: no marker yet), and cancels each
   * of `cancel`, only if still open with the attempts read. False when another writer changed
   * any of them first (nothing is written then).
   */
  replace(row: DeliveryRecord, expected: string | null, cancel: DeliveryRecord[]): Promise<boolean>;
}

export type Plan =
  /** The endpoint has had the event (a recover sends it no more), by these deliveries. */
  | { kind: 'received'; by: DeliveryRecord[] }
  /** A delivery to the endpoint that no attempt has reached yet: it goes out anyway. */
  | { kind: 'waiting'; delivery: DeliveryRecord }
  | { kind: 'replace'; expected: string | null; cancel: DeliveryRecord[] };

/**
 * A delivery that reached its endpoint: it succeeded, or it was cancelled while its last attempt was
 * under way and that attempt was answered 2xx (logged on the cancelled row).
 */
const reached = (d: DeliveryRecord) =>
  d.status === 'succeeded' || (d.status === 'cancelled' && isAccepted(d.last_response_status));

/** What to do for the endpoint, given the event's deliveries as read; `skipReceived` for recover. */
export function planFor(seen: EventDeliveries, endpointId: string, skipReceived: boolean): Plan {
  const rows = seen.rows.filter((d) => d.endpoint_id === endpointId);
  const received = rows.filter(reached);
  if (skipReceived && received.length > 0) return { kind: 'received', by: received };
  const open = rows.filter((d) => isOpenStatus(d.status));
  const current = seen.current.get(endpointId) ?? null;
  const [only] = open;
  if (
    open.length === 1 &&
    only &&
    only.status === 'pending' &&
    only.attempts === 0 &&
    (current === null || current === only.id)
  )
    return { kind: 'waiting', delivery: only };
  return { kind: 'replace', expected: current, cancel: open };
}

/** The event on its way to the endpoint: `created` by this call, or found waiting, or found made already under `id`. */
export type QueuedDelivery = { kind: 'queued'; delivery: DeliveryRecord; created: boolean };
export type Queued = { kind: 'received'; by: DeliveryRecord[] } | QueuedDelivery;

interface QueueOptions<Skip extends boolean> {
  skipReceived: Skip;
  sweepGraceMs: number;
  /** The resource whose order the new row follows, when the endpoint orders (./resource-order.ts). */
  orderKey?: string;
  /**
   * The new row's id when the caller queues the event at most once (a recovery: one id per
   * recovery and event). A row of that id, read or written by another run of the same caller,
   * is then this call's, whatever became of it since: it is never superseded by its own caller.
   */
  id?: string;
}

export interface QueueAgainDeps {
  currentDeliveries: CurrentDeliveryStore;
  now: () => Date;
}

/**
 * A lost race means another request made progress, so few tries are ever needed; this many means
 * something else is wrong.
 */
const MAX_TRIES = 10;

/**
 * The event queued to the endpoint once more (or found queued, or, with `skipReceived`, found
 * received), whatever other requests do at the same time. `seen` is a read already made.
 */
export async function queueAgain(
  deps: QueueAgainDeps,
  event: EventRecord,
  endpointId: string,
  opts: QueueOptions<false>,
  seen?: EventDeliveries,
): Promise<QueuedDelivery>;
export async function queueAgain(
  deps: QueueAgainDeps,
  event: EventRecord,
  endpointId: string,
  opts: QueueOptions<boolean>,
  seen?: EventDeliveries,
): Promise<Queued>;
export async function queueAgain(
  deps: QueueAgainDeps,
  event: EventRecord,
  endpointId: string,
  opts: QueueOptions<boolean>,
  seen?: EventDeliveries,
): Promise<Queued> {
  let read = seen ?? (await deps.currentDeliveries.ofEvent(event.shop_id, event.id, [endpointId]));
  for (let tries = 1; ; tries++) {
    const made = opts.id === undefined ? undefined : read.rows.find((d) => d.id === opts.id);
    if (made) return { kind: 'queued', delivery: made, created: false };
    const plan = planFor(read, endpointId, opts.skipReceived);
    if (plan.kind === 'received') return plan;
    if (plan.kind === 'waiting') return { kind: 'queued', delivery: plan.delivery, created: false };
    const now = deps.now();
    const row = newDelivery(event, {
      id: opts.id ?? newId('dlv', now.getTime()),
      endpointId,
      origin: 'redeliver',
      now,
      sweepGraceMs: opts.sweepGraceMs,
      orderKey: opts.orderKey,
    });
    if (await deps.currentDeliveries.replace(row, plan.expected, plan.cancel))
      return { kind: 'queued', delivery: row, created: true };
    if (tries >= MAX_TRIES) throw new Error(`could not queue event ${event.id} to ${endpointId}: lost ${tries} races`);
    // Jittered, so requests that collided do not collide again in step.
    await new Promise((r) => setTimeout(r, Math.random() * 10 * tries));
    read = await deps.currentDeliveries.ofEvent(event.shop_id, event.id, [endpointId]);
  }
}
