import { carriedEvent, messageOf, type DeliveryMessage, type DeliveryRecord, type DeliveryRef } from '../records';
import type { AttemptDeliveryStore, AttemptInputs, AttemptUpdate } from '../ports';
import { EVENT_RETENTION_SECONDS } from '../../domain/events';
import { batchGet, getRecord, stripKeys, updateIf, type Dynamo } from '../../store/client';
import { gsi1Partition, keys } from '../../store/keys';
import { TABLE } from '../../store/table';
import { eventFromItem } from '../../store/events';
import { endpointFromItems } from './endpoint-state';
import { isOpenStatus } from '../status';
import { DynamoEndpointStatsCounterStore } from './endpoint-stats';
import { releaseNextInOrder, type OrderDeps } from '../resource-order';
import { DynamoOrderStore } from './resource-order';
import { indexInput } from './due-index';

/**
 * A row sits under its endpoint (keys.delivery). It is in GSI1 (its endpoint's open deliveries)
 * and GSI2 (the due index) while it is open with a `sweep_at`: once its next wake-up is a timer,
 * a schedule, a chain or the sweeper (retrying, held, deferred, made by redeliver or recover). A
 * fan-out row on its fast path (`sweep_at` null: its message is on the queue) is in neither, and
 * its put and record bill the table alone. Both entries go when it ends.
 */
export function deliveryItem(d: DeliveryRecord): Record<string, unknown> {
  const indexed = isOpenStatus(d.status) && d.sweep_at !== null;
  return {
    ...rowKey(d),
    ...(indexed ? keys.openDeliveryByEndpoint(d.shop_id, d.endpoint_id, d.id) : {}),
    ...(indexed && d.sweep_at ? keys.dueDelivery(d.id, d.sweep_at) : {}),
    entity: 'delivery',
    [TABLE.ttlAttribute]: Math.floor(Date.parse(d.created_at) / 1000) + EVENT_RETENTION_SECONDS,
    ...d,
  };
}

/** A row's table key: under its endpoint. */
export const rowKey = (d: DeliveryRef) => keys.delivery(d.shop_id, d.endpoint_id, d.id);

const OPEN = { ':pending': 'pending', ':retrying': 'retrying' };
const IS_OPEN = '#status IN (:pending, :retrying)';

/**
 * The write that ends an open delivery as `cancelled` and takes it out of both indexes; `attempts`
 * also requires the row to be as read. A cancelled row waits for nothing: it drops its hold as a
 * recorded end does (`recordAttemptInput`); a release and the sweeper act on the hold of an open row only.
 */
export function cancelInput(d: DeliveryRef, attempts?: number) {
  return {
    Key: rowKey(d),
    UpdateExpression:
      'SET #status = :cancelled, next_attempt_at = :null, sweep_at = :null REMOVE held_by, ' +
      'gsi1pk, gsi1sk, gsi2pk, gsi2sk',
    ConditionExpression: attempts === undefined ? IS_OPEN : `${IS_OPEN} AND attempts = :attempts`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ...OPEN,
      ':cancelled': 'cancelled',
      ':null': null,
      ...(attempts === undefined ? {} : { ':attempts': attempts }),
    },
  };
}

/**
 * The write that logs attempt N on a row cancelled while the attempt was under way (its endpoint
 * disabled, or a newer delivery of the event superseding it): the request went, so the row's log
 * shows it. The row stays cancelled and in no index.
 */
export function logOnCancelledInput(d: DeliveryRecord, u: AttemptUpdate) {
  return {
    Key: rowKey(d),
    UpdateExpression:
      'SET attempts = :attempts, last_attempt_at = :at, last_response_status = :code, last_error = :error, ' +
      'history = list_append(history, :entry)',
    ConditionExpression: '#status = :cancelled AND attempts = :previous',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':cancelled': 'cancelled',
      ':attempts': u.attempts,
      ':previous': u.attempts - 1,
      ':at': u.last_attempt_at,
      ':code': u.last_response_status,
      ':error': u.last_error,
      ':entry': [u.entry],
    },
  };
}

/**
 * The write that records attempt N on its row, only if the row still says N-1 attempts and
 * is open. Still open: it is (or stays) in both indexes, at its new sweep time; ended: it
 * leaves them (removing what a fast-path row never had costs nothing).
 */
export function recordAttemptInput(d: DeliveryRecord, u: AttemptUpdate) {
  const due =
    isOpenStatus(u.status) && u.sweep_at
      ? { ...keys.dueDelivery(d.id, u.sweep_at), ...keys.openDeliveryByEndpoint(d.shop_id, d.endpoint_id, d.id) }
      : null;
  return {
    Key: rowKey(d),
    // An attempted row is held by nothing: a hold that crossed this attempt (written after the row
    // was read for it) would otherwise stay on a retrying row, whose messages then send nothing and
    // which no release takes (a release is of a pending row), for good.
    UpdateExpression:
      'SET #status = :status, attempts = :attempts, last_attempt_at = :at, next_attempt_at = :next, ' +
      'last_response_status = :code, last_error = :error, history = list_append(history, :entry), sweep_at = :sweep' +
      (due
        ? ', gsi1pk = :openPk, gsi1sk = :openSk, gsi2pk = :duePk, gsi2sk = :dueSk REMOVE held_by'
        : ' REMOVE held_by, gsi1pk, gsi1sk, gsi2pk, gsi2sk'),
    ConditionExpression: `attempts = :previous AND ${IS_OPEN}`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ...OPEN,
      ':status': u.status,
      ':attempts': u.attempts,
      ':previous': u.attempts - 1,
      ':at': u.last_attempt_at,
      ':next': u.next_attempt_at,
      ':code': u.last_response_status,
      ':error': u.last_error,
      ':entry': [u.entry],
      ':sweep': u.sweep_at,
      ...(due ? { ':openPk': due.gsi1pk, ':openSk': due.gsi1sk, ':duePk': due.gsi2pk, ':dueSk': due.gsi2sk } : {}),
    },
  };
}

/**
 * The delivery rows as the pipeline reads and writes them: created by the fan-out, read and
 * recorded by the consumer, listed per event per endpoint's open ones, and cancelled in bulk. The
 * API's listings build on it (./deliveries.ts), apart, so the consumer's bundle carries only this.
 */
export class DynamoAttemptDeliveryStore implements AttemptDeliveryStore {
  private readonly stats: DynamoEndpointStatsCounterStore;
  /**
   * A cancelled ordered delivery leaves its chain; with no queue here, a row it releases is due at
   * once for the sweeper.
   */
  private readonly order: OrderDeps;

  constructor(protected readonly db: Dynamo) {
    this.stats = new DynamoEndpointStatsCounterStore(db);
    this.order = { order: new DynamoOrderStore(db), timeScale: 1, now: () => new Date() };
  }

  async get(ref: DeliveryRef): Promise<DeliveryRecord | null> {
    return getRecord<DeliveryRecord>(this.db, rowKey(ref));
  }

  async readForAttempts(messages: DeliveryMessage[]): Promise<AttemptInputs> {
    // A message that carries its event (the fan-out's) needs only row and endpoint (configuration and state) read.
    const refs = (m: DeliveryMessage) => ({
      delivery: keys.delivery(m.shop_id, m.endpoint_id, m.delivery_id),
      endpoint: keys.webhookEndpoint(m.shop_id, m.endpoint_id),
      state: keys.endpointState(m.shop_id, m.endpoint_id),
      ...(carriedEvent(m) ? {} : { event: keys.event(m.shop_id, m.event_id) }),
    });
    const id = (key: { pk: string; sk: string }) => `${key.pk}|${key.sk}`;
    const wanted = new Map(messages.flatMap((m) => Object.values(refs(m))).map((key) => [id(key), key]));
    const found = await batchGet(this.db, [...wanted.values()]);
    const item = (key: { pk: string; sk: string }) => found.get(id(key));
    return {
      delivery: (m) => mapOrNull(item(refs(m).delivery), (i) => stripKeys<DeliveryRecord>(i)),
      event: (m) => carriedEvent(m) ?? mapOrNull(item(keys.event(m.shop_id, m.event_id)), eventFromItem),
      endpoint: (m) => mapOrNull(item(refs(m).endpoint), (config) => endpointFromItems(config, item(refs(m).state))),
    };
  }

  async recordAttempt(d: DeliveryRecord, u: AttemptUpdate): Promise<boolean> {
    const recorded = await updateIf(this.db, recordAttemptInput(d, u));
    // The endpoint's stats count each attempt once: only the write that recorded it adds to them.
    if (recorded) await this.stats.addQuietly(d.shop_id, d.endpoint_id, [{ entry: u.entry, status: u.status }]);
    return recorded;
  }

  async index(d: Pick<DeliveryRecord, 'shop_id' | 'event_id' | 'id' | 'endpoint_id'>, sweepAt: Date): Promise<boolean> {
    return updateIf(this.db, indexInput(d, sweepAt.toISOString()));
  }

  /** Only an open delivery is cancelled; one that ended meanwhile keeps its outcome. */
  async cancel(d: DeliveryRef): Promise<boolean> {
    return updateIf(this.db, cancelInput(d));
  }

  async listOpenForEndpoint(shopId: string, endpointId: string): Promise<DeliveryRecord[]> {
    return (await this.openItems(shopId, endpointId)).map((i) => stripKeys<DeliveryRecord>(i));
  }

  /** Every GSI1 entry of the endpoint (its open deliveries); `id` and `status` only when asked. */
  protected async openItems(
    shopId: string,
    endpointId: string,
    statusOnly = false,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    for await (const page of this.openPages(shopId, endpointId, statusOnly)) items.push(...page);
    return items;
  }

  /** The endpoint's GSI1 entries, a page at a time (the caller may stop early). */
  protected async *openPages(
    shopId: string,
    endpointId: string,
    statusOnly = false,
  ): AsyncGenerator<Record<string, unknown>[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ...(statusOnly
          ? { ProjectionExpression: 'id, #status', ExpressionAttributeNames: { '#status': 'status' } }
          : {}),
        ExpressionAttributeValues: { ':pk': gsi1Partition.openDeliveries(shopId, endpointId) },
        ExclusiveStartKey: start,
      });
      yield out.Items ?? [];
      start = out.LastEvaluatedKey;
    } while (start);
  }

  async listDueForEndpoint(shopId: string, endpointId: string, now: Date, limit: number): Promise<DeliveryMessage[]> {
    const due: DeliveryMessage[] = [];
    let start: Record<string, unknown> | undefined;
    // Oldest first (ids are time-ordered); a few pages at most, so an endpoint with many rows not yet due stays cheap.
    for (let page = 0; page < 4 && due.length < limit; page++) {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        // Not an ordered row never attempted: only its chain's admission may send it (../resource-order.ts).
        FilterExpression: 'next_attempt_at <= :now AND (attribute_not_exists(order_key) OR attempts > :zero)',
        ProjectionExpression: 'shop_id, event_id, id, endpoint_id, attempts',
        ExpressionAttributeValues: {
          ':pk': gsi1Partition.openDeliveries(shopId, endpointId),
          ':now': now.toISOString(),
          ':zero': 0,
        },
        Limit: 4 * limit,
        ExclusiveStartKey: start,
      });
      due.push(...(out.Items ?? []).map((i) => messageOf(i as DeliveryRecord)));
      start = out.LastEvaluatedKey;
      if (!start) break;
    }
    return due.slice(0, limit);
  }

  /**
   * Cancels the endpoint's open deliveries created up to `before` (the disable or delete: rows
   * written after it were written by a fan-out that read the endpoint still enabled, or after it
   * was enabled again), a page of its index at a time, CANCEL_CONCURRENCY writes at once, and
   * starts no write after `budgetMs`: a request that disables or deletes an endpoint with a long
   * backlog answers in time. Whatever it leaves, the consumer cancels as each falls due (its
   * endpoint is disabled or gone). Returns how many it cancelled; the first failed write stops it
   * and is thrown once the writes under way have ended.
   */
  async cancelOpenForEndpoint(
    shopId: string,
    endpointId: string,
    { before, budgetMs = CANCEL_BUDGET_MS }: { before: Date; budgetMs?: number },
  ): Promise<number> {
    const stopAt = Date.now() + budgetMs;
    const cutoff = before.toISOString();
    let cancelled = 0;
    let failure: { error: unknown } | null = null;
    for await (const page of this.openPages(shopId, endpointId)) {
      const open = page.map((i) => stripKeys<DeliveryRecord>(i)).filter((d) => d.created_at <= cutoff);
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < open.length && Date.now() < stopAt && !failure; i = next++) {
          try {
            if (await this.cancel(open[i] as DeliveryRecord)) {
              cancelled++;
              await releaseNextInOrder(this.order, open[i] as DeliveryRecord);
            }
          } catch (error) {
            failure ??= { error };
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(CANCEL_CONCURRENCY, open.length) }, worker));
      if (failure) throw (failure as { error: unknown }).error;
      if (Date.now() >= stopAt) break;
    }
    return cancelled;
  }
}

/**
 * Cancel writes in flight at once, and the time a request spends starting them (an API function
 * runs for 10 s at most).
 */
const CANCEL_CONCURRENCY = 16;
const CANCEL_BUDGET_MS = 5_000;

const mapOrNull = <T>(item: Record<string, unknown> | undefined, map: (i: Record<string, unknown>) => T): T | null =>
  item ? map(item) : null;
