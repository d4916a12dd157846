import { derivedId, idTime } from '../ids';
import type { EventRecord } from '../domain/events';
import type { EndpointRecord } from '../domain/webhook-endpoints';
import { SWEEP_GRACE_MS, sweepGraceMs } from './policy';
import { carryingEvent, messageOf, type DeliveryQueue, type DeliveryRecord, type DeliveryStore } from './records';
import { notSentAttempt, withAttempt, type NextAttempt } from './attempt-plan';
import type { RetryScheduler } from './ports';
import { holdsBack } from './circuit';
import { matchesFilter } from '../domain/event-filter';
import { admitInOrder, chainMember, orderKeyFor, type OrderStore } from './resource-order';

/**
 * The fan-out: which endpoints an event goes to (recover's and redeliver's rule, and the fan-out's
 * narrower one), the rows it creates for them, and their first wake-ups.
 */

export function isSubscribed(endpoint: EndpointRecord, event: EventRecord): boolean {
  if (event.endpoint_id) return endpoint.id === event.endpoint_id;
  return endpoint.enabled && (endpoint.events.includes('*') || endpoint.events.includes(event.type));
}

/**
 * An endpoint receives only events created after it was: a replayed stream (a restart, a
 * retried batch) never hands an old event to a new endpoint.
 */
export const existedAt = (endpoint: EndpointRecord, event: EventRecord): boolean =>
  endpoint.created_at <= event.timestamp;

/**
 * Whether an event goes to an endpoint: the rule of recover and a redeliver without `endpoint_ids`,
 * which the fan-out narrows (`sentNow`). Subscribed to its type, existing when it was created, and
 * matching the endpoint's filter; a test event goes to its endpoint whatever the filter.
 */
export function receives(endpoint: EndpointRecord, event: EventRecord): boolean {
  if (!isSubscribed(endpoint, event) || !existedAt(endpoint, event)) return false;
  return Boolean(event.endpoint_id) || matchesFilter(endpoint.filter, event);
}

/**
 * The fan-out's rule: an endpoint that receives the event, and was enabled when it was created. One
 * enabled again after a lagging stream wrote the event missed it, as it would have on time (recover sends
 * it), rather than get it from the fan-out beside a recover that queues it too.
 */
const sentNow = (endpoint: EndpointRecord, event: EventRecord): boolean =>
  receives(endpoint, event) && endpoint.enabled_at <= event.timestamp;

/**
 * The id of the fan-out's delivery of an event to an endpoint: derived from both, so a retried
 * stream batch finds its rows, and the event's deliveries are found by key, with no index.
 */
export const fanOutDeliveryId = (eventId: string, endpointId: string): string =>
  derivedId('dlv', idTime(eventId), `${eventId}/${endpointId}`);

/** A new delivery row of an event: its id, its endpoint, who made it and when. */
export interface NewDelivery {
  id: string;
  endpointId: string;
  origin: DeliveryRecord['origin'];
  now: Date;
  /** How long after `now` the sweeper wakes a row the stream enqueues (./policy.ts, `sweepGraceMs`). */
  sweepGraceMs?: number;
  /** Its resource's chain, for an endpoint that orders per resource (./resource-order.ts, `orderKeyFor`). */
  orderKey?: string;
}

/**
 * A delivery row as created for one endpoint, before any attempt; its queue message is sent at
 * once. The fan-out's row starts on the fast path (`sweep_at` null, in no index: its message is
 * its wake-up); a redeliver's or recover's is in the due index from the start, since the
 * stream, not the API, enqueues it.
 */
export function newDelivery(
  event: EventRecord,
  { id, endpointId, origin, now, sweepGraceMs = SWEEP_GRACE_MS, orderKey }: NewDelivery,
): DeliveryRecord {
  return {
    ...(orderKey ? { order_key: orderKey } : {}),
    id,
    shop_id: event.shop_id,
    event_id: event.id,
    event_type: event.type,
    endpoint_id: endpointId,
    status: 'pending',
    attempts: 0,
    last_attempt_at: null,
    next_attempt_at: now.toISOString(),
    last_response_status: null,
    last_error: null,
    history: [],
    origin,
    created_at: now.toISOString(),
    sweep_at: origin === 'fanout' ? null : new Date(now.getTime() + sweepGraceMs).toISOString(),
  };
}

export interface FanOutDeps {
  endpoints: { list(shopId: string): Promise<EndpointRecord[]> };
  deliveries: DeliveryStore;
  queue: DeliveryQueue;
  /** The chains of endpoints with `ordering: "per_resource"`. */
  order: OrderStore;
  /** Wakes a delivery whose first attempt the open circuit held back, at its second. */
  scheduler: Pick<RetryScheduler, 'schedule' | 'needsSchedule'>;
  timeScale: number;
  now: () => Date;
}

/**
 * The records of one stream batch fan out together: each shop's endpoints are read once for
 * the batch, not once per event (a busy shop's batch of 100 events costs one Query, not 100).
 */
export function listingOncePerBatch<D extends FanOutDeps>(deps: D): D {
  const lists = new Map<string, Promise<EndpointRecord[]>>();
  const list = (shopId: string) => {
    const listed = lists.get(shopId) ?? deps.endpoints.list(shopId);
    lists.set(shopId, listed);
    return listed;
  };
  // The store's other methods stay reachable (a spread would drop those of a class instance).
  const endpoints = Object.assign(Object.create(deps.endpoints) as D['endpoints'], { list });
  return { ...deps, endpoints };
}

/** Answering as far as the endpoint's last attempts tell: its circuit closed and no failure since its last success. */
const answering = (e: EndpointRecord): boolean => e.health.circuit === 'closed' && e.health.consecutive_failures === 0;

/**
 * One delivery row per subscribed endpoint, then one queue message per row. Row ids derive
 * from event and endpoint, so a retried stream batch finds its rows and only re-sends
 * those never attempted: a crash between writing rows and sending loses nothing.
 *
 * The rows of endpoints that answer are written first; their messages go while the failing
 * endpoints' rows are written: a failing receiver's rows do not hold back a healthy
 * receiver's message, and its messages queue behind the healthy ones' (one more queue
 * request per event, only while one fails).
 * An endpoint whose circuit is open with no probe due gets its row with the first attempt
 * already recorded as `circuit_open` (what the consumer would record) and a message for
 * the second: a dead receiver costs the consumer nothing until then.
 */
export async function fanOut(deps: FanOutDeps, event: EventRecord): Promise<number> {
  const listed = await deps.endpoints.list(event.shop_id);
  await wakeLeftovers(
    deps,
    listed.filter((e) => !sentNow(e, event) && receives({ ...e, enabled: true }, event)),
    event,
  );
  const endpoints = listed.filter((e) => sentNow(e, event));
  if (endpoints.length === 0) return 0;
  const now = deps.now();
  const grace = sweepGraceMs(deps.timeScale);
  const rowOf = (e: EndpointRecord) =>
    newDelivery(event, {
      id: fanOutDeliveryId(event.id, e.id),
      endpointId: e.id,
      origin: 'fanout',
      now,
      sweepGraceMs: grace,
      orderKey: orderKeyFor(e, event),
    });
  // An ordered delivery is not recorded as not sent: behind an earlier one of its resource, it must use no attempt.
  const held = (e: EndpointRecord) => holdsBack(e.health, now.getTime()) && !orderKeyFor(e, event);
  const first = endpoints.filter(answering);
  const created = first.length > 0 ? await deps.deliveries.createMissing(first.map(rowOf)) : [];
  const rows = onFastPath(await orIndexed(deps, created, () => inOrder(deps, created)));
  // Their messages go while the others' rows are written: the event's fan-out takes the longer of the two, not both.
  const [, failing] = await Promise.all([
    orIndexed(deps, rows, () => deps.queue.send(rows.map((d) => carryingEvent(messageOf(d), event)))),
    enqueue(deps, endpoints.filter((e) => !answering(e) && !held(e)).map(rowOf), event),
    holdBack(
      deps,
      endpoints.filter(held).map((e) => heldRow(deps, rowOf(e), now)),
    ),
  ]);
  return rows.length + failing;
}

/**
 * A try of this record may have written a row for an endpoint disabled since (and perhaps enabled
 * again), and died before its message went: the row, on its fast path, has no other wake-up. Its
 * message goes now, and the consumer cancels it (or sends it, should the endpoint be enabled by then).
 */
async function wakeLeftovers(deps: FanOutDeps, disabled: EndpointRecord[], event: EventRecord): Promise<void> {
  if (disabled.length === 0) return;
  const refs = disabled.map((e) => ({
    shop_id: event.shop_id,
    endpoint_id: e.id,
    id: fanOutDeliveryId(event.id, e.id),
  }));
  const rows = await deps.deliveries.unsent(refs);
  if (rows.length > 0) await deps.queue.send(rows.map((d) => messageOf(d)));
}

async function enqueue(deps: FanOutDeps, rows: DeliveryRecord[], event: EventRecord): Promise<number> {
  if (rows.length === 0) return 0;
  const created = await deps.deliveries.createMissing(rows);
  return orIndexed(deps, created, async () => {
    const toSend = onFastPath(await inOrder(deps, created));
    await deps.queue.send(toSend.map((d) => carryingEvent(messageOf(d), event)));
    return toSend.length;
  });
}

/**
 * The rows whose message is their only wake-up. One an earlier try put in the due index (its
 * send or its chain failed) is the sweeper's: a message beside it could meet it in flight.
 */
const onFastPath = (rows: DeliveryRecord[]): DeliveryRecord[] => rows.filter((r) => r.sweep_at === null);

/**
 * A fast-path row is in no index: its message is its only wake-up. Should its message not be
 * sent (the queue or the chain failed), the rows go into the due index before the error goes
 * on, so the sweeper finds them even if the stream's retries run out (a retry that succeeds
 * sends them anyway). A crash instead leaves that to the stream's retry, which re-sends rows
 * never attempted.
 */
async function orIndexed<T>(deps: FanOutDeps, rows: DeliveryRecord[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const at = new Date(deps.now().getTime() + sweepGraceMs(deps.timeScale));
    await Promise.allSettled(rows.filter((r) => r.sweep_at === null).map((r) => deps.deliveries.index(r, at)));
    throw err;
  }
}

/**
 * The rows to send now: an ordered one only if no earlier delivery of its resource is open (else
 * it is held, see ./resource-order.ts). One whose chain kept moving under it (`moved`) is left
 * to the sweeper: a fast-path row goes into the due index for that.
 */
export async function inOrder(
  deps: Pick<FanOutDeps, 'order' | 'queue' | 'timeScale' | 'now'> & { deliveries: Pick<DeliveryStore, 'index'> },
  rows: DeliveryRecord[],
): Promise<DeliveryRecord[]> {
  const admitted = await Promise.all(
    rows.map(async (row) => {
      const member = chainMember(row);
      if (!member) return true;
      const admission = await admitInOrder(deps, member);
      if (admission === 'moved' && row.sweep_at === null)
        await deps.deliveries.index(row, new Date(deps.now().getTime() + sweepGraceMs(deps.timeScale)));
      return admission === 'send';
    }),
  );
  return rows.filter((_, i) => admitted[i]);
}

/**
 * Rows this try wrote with their first attempt recorded get the wake-up of their second. A row an
 * earlier try of the batch wrote, recorded (its circuit was already open then), does not come
 * back: the sweeper is its net. One it wrote unrecorded (the circuit opened since) comes back as
 * stored, never attempted: a wake-up for a second attempt would find it at its first, and a copy
 * of that wake-up (another retry's) would then send the second at once. It goes on the queue for
 * its first attempt, like any new row.
 */
async function holdBack(deps: FanOutDeps, heldBack: { row: DeliveryRecord; next: NextAttempt }[]): Promise<void> {
  if (heldBack.length === 0) return;
  const created = await deps.deliveries.createMissing(heldBack.map((h) => h.row));
  const unrecorded = onFastPath(created.filter((c) => c.attempts === 0));
  if (unrecorded.length > 0)
    await orIndexed(deps, unrecorded, () => deps.queue.send(unrecorded.map((d) => messageOf(d))));
  const recorded = heldBack.filter((h) => created.some((c) => c.id === h.row.id && c.attempts > 0));
  for (const { row, next } of recorded) {
    if (next.schedule && next.at) await deps.scheduler.schedule(messageOf(row), next.at);
  }
}

/** The row of an endpoint whose open circuit holds its first attempt back: recorded as not sent, the second planned. */
function heldRow(deps: FanOutDeps, row: DeliveryRecord, now: Date): { row: DeliveryRecord; next: NextAttempt } {
  const { update, next } = notSentAttempt(row, deps.scheduler, deps.timeScale, now);
  return { row: withAttempt(row, update), next };
}
