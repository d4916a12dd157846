import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BatchGetCommand, BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryRecord } from '../domain/deliveries';
import type { AttemptDeliveryStore, AttemptInputs, AttemptUpdate } from '../domain/delivery-attempt';
import type { EndpointRecord } from '../domain/webhook-endpoints';
import { EVENT_RETENTION_SECONDS } from '../domain/events';
import { getRecord, queryPrefix, stripKeys, type Dynamo } from './client';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';
import { eventFromItem } from './events';

/** Before retry `tries` of what a batch request left unprocessed: exponential pause, and a limit. */
async function backOff(tries: number, failure: string): Promise<void> {
  if (tries > 8) throw new Error(failure);
  if (tries > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** tries));
}

/** Open deliveries carry the GSI1 entry of their endpoint; it is removed when they end. */
function deliveryItem(d: DeliveryRecord): Record<string, unknown> {
  return {
    ...keys.delivery(d.shop_id, d.event_id, d.id),
    ...keys.openDeliveryByEndpoint(d.shop_id, d.endpoint_id, d.id),
    entity: 'delivery',
    [TABLE.ttlAttribute]: Math.floor(Date.parse(d.created_at) / 1000) + EVENT_RETENTION_SECONDS,
    ...d,
  };
}

const OPEN = { ':pending': 'pending', ':retrying': 'retrying' };
const IS_OPEN = '#status IN (:pending, :retrying)';

export class DynamoDeliveryStore implements AttemptDeliveryStore {
  constructor(private readonly db: Dynamo) {}

  async createMissing(rows: DeliveryRecord[]): Promise<DeliveryRecord[]> {
    const results = await Promise.all(
      rows.map(async (row) => {
        try {
          await this.db.doc.send(
            new PutCommand({
              TableName: this.db.tableName,
              Item: deliveryItem(row),
              ConditionExpression: 'attribute_not_exists(pk)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          );
          return row;
        } catch (err) {
          if (!(err instanceof ConditionalCheckFailedException)) throw err;
          // The SDK leaves this item marshalled, even through the document client.
          const existing = err.Item ? stripKeys<DeliveryRecord>(unmarshall(err.Item)) : null;
          // Written by an earlier try of this batch but maybe never enqueued: enqueue again.
          return existing && existing.status === 'pending' && existing.attempts === 0 ? existing : null;
        }
      }),
    );
    return results.filter((r): r is DeliveryRecord => r !== null);
  }

  async createAll(rows: DeliveryRecord[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 25) {
      let requests: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> = {
        [this.db.tableName]: rows.slice(i, i + 25).map((r) => ({ PutRequest: { Item: deliveryItem(r) } })),
      };
      for (let tries = 0; Object.keys(requests).length > 0; tries++) {
        await backOff(tries, 'could not write delivery rows');
        const out = await this.db.doc.send(new BatchWriteCommand({ RequestItems: requests }));
        requests = (out.UnprocessedItems ?? {}) as typeof requests;
      }
    }
  }

  async get(shopId: string, eventId: string, deliveryId: string): Promise<DeliveryRecord | null> {
    return getRecord<DeliveryRecord>(this.db, keys.delivery(shopId, eventId, deliveryId));
  }

  async getForAttempt(shopId: string, eventId: string, deliveryId: string, endpointId: string): Promise<AttemptInputs> {
    const wanted = [keys.delivery(shopId, eventId, deliveryId), keys.event(shopId, eventId), keys.webhookEndpoint(shopId, endpointId)];
    const found = new Map<string, Record<string, unknown>>();
    let pending: Record<string, unknown>[] = wanted;
    for (let tries = 0; pending.length > 0; tries++) {
      await backOff(tries, 'could not read the delivery inputs');
      const out = await this.db.doc.send(new BatchGetCommand({ RequestItems: { [this.db.tableName]: { Keys: pending, ConsistentRead: true } } }));
      for (const item of out.Responses?.[this.db.tableName] ?? []) found.set(item.sk as string, item);
      pending = out.UnprocessedKeys?.[this.db.tableName]?.Keys ?? [];
    }
    const [delivery, event, endpoint] = wanted.map((k) => found.get(k.sk));
    return {
      delivery: delivery ? stripKeys<DeliveryRecord>(delivery) : null,
      event: event ? eventFromItem(event) : null,
      endpoint: endpoint ? stripKeys<EndpointRecord>(endpoint) : null,
    };
  }

  async listForEvent(shopId: string, eventId: string): Promise<DeliveryRecord[]> {
    const items = await queryPrefix(this.db, shopPk(shopId), skPrefix.delivery(eventId));
    return items.map((i) => stripKeys<DeliveryRecord>(i));
  }

  async recordAttempt(d: DeliveryRecord, u: AttemptUpdate): Promise<boolean> {
    const open = u.status === 'pending' || u.status === 'retrying';
    try {
      await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: keys.delivery(d.shop_id, d.event_id, d.id),
          UpdateExpression:
            'SET #status = :status, attempts = :attempts, last_attempt_at = :at, next_attempt_at = :next, ' +
            'last_response_status = :code, last_error = :error, history = list_append(history, :entry)' +
            (open ? '' : ' REMOVE gsi1pk, gsi1sk'),
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
          },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async cancel(d: Pick<DeliveryRecord, 'shop_id' | 'event_id' | 'id'>, _at: string): Promise<void> {
    try {
      await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: keys.delivery(d.shop_id, d.event_id, d.id),
          UpdateExpression: 'SET #status = :cancelled, next_attempt_at = :null REMOVE gsi1pk, gsi1sk',
          ConditionExpression: IS_OPEN,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ...OPEN, ':cancelled': 'cancelled', ':null': null },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async cancelOpenForEndpoint(shopId: string, endpointId: string, at: string): Promise<number> {
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.doc.send(
        new QueryCommand({
          TableName: this.db.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.openDeliveryByEndpoint(shopId, endpointId, '').gsi1pk },
          ExclusiveStartKey: start,
        }),
      );
      const open = (out.Items ?? []).map((i) => stripKeys<DeliveryRecord>(i));
      await Promise.all(open.map((d) => this.cancel(d, at)));
      count += open.length;
      start = out.LastEvaluatedKey;
    } while (start);
    return count;
  }
}
