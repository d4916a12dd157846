import { logger } from '../logger';
import { sweepGraceMs } from './policy';
import type { DeliveryQueue, DeliveryRecord } from './records';
import type { EventRecord } from '../domain/events';
import type { EndpointRecord } from '../domain/webhook-endpoints';

/**
 * Ordered delivery per resource (`ordering: "per_resource"`). Each endpoint and resource has
 * a chain: one small item holding its open deliveries as `<event id>/<delivery id>`. Event ids
 * are time-ordered, so the elements sort in the order the events were created. A delivery
 * joins its chain before its first send; if an element of an earlier event is in it, the
 * delivery is held (`held_by`, no message, no attempt, `next_attempt_at` null) instead. When a
 * delivery ends it leaves the chain, and the chain's new head, if held, is released and sent.
 *
 * The rows stay the truth: a hold is written only while the element it waits for is still in
 * the chain (one transaction), so a hold and the release of what it waits for never cross; a
 * release is conditional on the row being held, so it is sent once. Whatever a crash leaves (a
 * row not in its chain, an element whose delivery ended), the sweeper repairs from the rows:
 * a held row stays in the due index, and its sweep walks the chain again.
 */

/** Which chain: the endpoint's, for one resource. */
export interface ChainRef {
  shop_id: string;
  endpoint_id: string;
  order_key: string;
}

export type ChainMember = ChainRef & Pick<DeliveryRecord, 'event_id' | 'id'>;

/** The delivery's element in its chain. */
export const elementOf = (d: Pick<DeliveryRecord, 'event_id' | 'id'>): string => `${d.event_id}/${d.id}`;

export function parseElement(element: string): { event_id: string; id: string } {
  const at = element.indexOf('/');
  return { event_id: element.slice(0, at), id: element.slice(at + 1) };
}

/** A row of an ordered delivery, with the chain it belongs to. */
export const chainMember = (d: DeliveryRecord): ChainMember | null =>
  d.order_key ? { ...d, order_key: d.order_key } : null;

/**
 * The latest open element of an earlier event: what holds this delivery back (null: nothing).
 * An element of the same event (a redeliver beside the delivery it superseded) never does.
 */
export function aheadOf(open: readonly string[], d: Pick<DeliveryRecord, 'event_id'>): string | null {
  let ahead: string | null = null;
  for (const element of open) {
    if (parseElement(element).event_id < d.event_id && (ahead === null || element > ahead)) ahead = element;
  }
  return ahead;
}

/**
 * The resource a delivery to this endpoint is ordered by: the event's `data.id` when the endpoint
 * orders; else none.
 */
export function orderKeyFor(
  endpoint: Pick<EndpointRecord, 'ordering'>,
  event: Pick<EventRecord, 'data'>,
): string | undefined {
  const id = event.data.id;
  return endpoint.ordering === 'per_resource' && typeof id === 'string' && id.length > 0 ? id : undefined;
}

export type HoldResult = 'held' | 'moved' | 'ahead_gone';
/**
 * What a release found: the row was held and now is due; open and not held (sent or being sent); or
 * ended (or gone).
 */
export type ReleaseResult = 'released' | 'open' | 'ended';

export interface OrderStore {
  /** Adds the element to its chain; the chain's elements after, sorted. */
  join(member: ChainMember): Promise<string[]>;
  /** Removes the element; the chain's elements after, sorted. */
  leave(chain: ChainRef, element: string): Promise<string[]>;
  /** The chain's elements, sorted (strongly consistent). */
  read(chain: ChainRef): Promise<string[]>;
  /**
   * Holds the row behind `ahead` in one transaction: only if `ahead` is still in the chain
   * (else `ahead_gone`) and the row is still pending, unattempted and not held (else `moved`,
   * or `held` when it already was).
   */
  hold(member: ChainMember, ahead: string, sweepAt: Date): Promise<HoldResult>;
  /** Clears the hold of a held open row, due now, waking it by `sweepAt`. */
  release(chain: ChainRef, element: string, now: Date, sweepAt: Date): Promise<ReleaseResult>;
}

export interface OrderDeps {
  order: OrderStore;
  /**
   * Absent where nothing may talk to the queue (the API): a released row is then due at once, and
   * the sweeper sends it.
   */
  queue?: DeliveryQueue;
  timeScale: number;
  now: () => Date;
}

/** Stale elements a walk removes before it leaves the rest to the sweeper. */
const MAX_WALK = 10;
const MAX_TRIES = 3;

/**
 * A delivery about to be sent for the first time joins its chain: `send` when no earlier
 * event's delivery is open, `held` when one is (nothing to send now), `moved` when the row
 * was attempted, ended or held meanwhile (nothing to send either: it has its own wake-up).
 */
export async function admitInOrder(deps: OrderDeps, member: ChainMember): Promise<'send' | 'held' | 'moved'> {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const ahead = aheadOf(await deps.order.join(member), member);
    if (!ahead) return 'send';
    const now = deps.now();
    const held = await deps.order.hold(member, ahead, new Date(now.getTime() + sweepGraceMs(deps.timeScale)));
    if (held !== 'ahead_gone') return held;
  }
  // The chain keeps moving under it: the row is unchanged and due, so the sweeper admits it in a grace.
  return 'moved';
}

/**
 * The one step after a delivery ended (succeeded, failed for good, cancelled), wherever it
 * ended: it leaves its chain, and the next delivery of its resource, if held, goes out.
 */
export async function releaseNextInOrder(deps: OrderDeps, ended: DeliveryRecord): Promise<void> {
  const member = chainMember(ended);
  if (!member) return;
  try {
    await advance(deps, member, await deps.order.leave(member, elementOf(member)));
  } catch (err) {
    // The end is recorded already; the next stays held, in the due index, until the sweeper walks the chain.
    logger.warn('Next delivery of a resource not released now; the sweeper releases it', {
      shop_id: ended.shop_id,
      endpoint_id: ended.endpoint_id,
      delivery_id: ended.id,
      error: err as Error,
    });
  }
}

/**
 * The sweeper met a held row: walks its chain from the head as a release would (elements of
 * deliveries that ended are dropped, a held head goes out). True when the row was released.
 */
export async function repairHeld(deps: OrderDeps, held: DeliveryRecord): Promise<boolean> {
  const member = chainMember(held);
  if (!member) return false;
  let open = await deps.order.read(member);
  // Not in its chain (emptied by a disable, expired): it joins again, and decides as at first.
  if (!open.includes(elementOf(member))) open = await deps.order.join(member);
  return (await advance(deps, member, open)) === elementOf(member);
}

/**
 * From the chain's head: a held head is released, an open one ends the walk, an ended one is
 * dropped. The element released, if any.
 */
async function advance(deps: OrderDeps, chain: ChainRef, open: string[]): Promise<string | null> {
  for (let walked = 0; walked < MAX_WALK; walked++) {
    const head = open[0];
    if (head === undefined) return null;
    const now = deps.now();
    const wakeBy = deps.queue ? new Date(now.getTime() + sweepGraceMs(deps.timeScale)) : now;
    const found = await deps.order.release(chain, head, now, wakeBy);
    if (found === 'open') return null;
    if (found === 'released') {
      const { event_id, id } = parseElement(head);
      // A held row was never attempted: this is its first attempt.
      await deps.queue?.send([
        { shop_id: chain.shop_id, event_id, delivery_id: id, endpoint_id: chain.endpoint_id, attempt: 1 },
      ]);
      return head;
    }
    open = await deps.order.leave(chain, head);
  }
  return null;
}

/**
 * Runs `work` on each item, in parallel except that items of one resource (same key) run one
 * after the other in the order given (a stream batch's order: the shop's events in the order
 * they were written), so an earlier event joins its chains before a later one looks at them.
 * When one fails, the later ones of its resource fail too (they are retried with it, in order).
 */
export function oneResourceAtATime<T>(
  items: readonly T[],
  keyOf: (item: T) => string | null,
  work: (item: T) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  const tails = new Map<string, Promise<void>>();
  return Promise.allSettled(
    items.map((item) => {
      const key = keyOf(item);
      if (key === null) return work(item);
      const run = (tails.get(key) ?? Promise.resolve()).then(() => work(item));
      tails.set(key, run);
      return run;
    }),
  );
}

/** The resource a stored event is about, for `oneResourceAtATime`: its shop and `data.id`. */
export const resourceOf = (event: Pick<EventRecord, 'shop_id' | 'data'>): string | null =>
  typeof event.data.id === 'string' ? `${event.shop_id}/${event.data.id}` : null;
