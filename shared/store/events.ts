import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { EVENT_RETENTION_SECONDS, type EventRecord } from '../domain/events';
import type { EventWriter } from '../domain/webhook-endpoints';
import type { EventReader } from '../domain/deliveries';
import type { Page, PageRequest } from '../domain/pagination';
import { stripKeys, type Dynamo } from './client';
import { queryPage } from './pagination';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';

/**
 * The table item of an event: listed by shop and by type, expiring after 30 days. `data`
 * is kept as JSON text: a DynamoDB map would lose the field order, and every delivery of
 * the event must send the same body.
 */
export function eventItem(event: EventRecord): Record<string, unknown> {
  const { data, ...rest } = event;
  return {
    ...keys.event(event.shop_id, event.id),
    ...keys.eventByType(event.shop_id, event.type, event.id),
    entity: 'event',
    [TABLE.ttlAttribute]: Math.floor(Date.parse(event.timestamp) / 1000) + EVENT_RETENTION_SECONDS,
    ...rest,
    data_json: JSON.stringify(data),
  };
}

/** The event of a table item (or of an unmarshalled stream image). */
export function eventFromItem(item: Record<string, unknown>): EventRecord {
  const { data_json, ...rest } = stripKeys<Omit<EventRecord, 'data'> & { data_json: string }>(item);
  return { ...rest, data: JSON.parse(data_json) as Record<string, unknown> };
}

export class DynamoEventStore implements EventWriter, EventReader {
  constructor(private readonly db: Dynamo) {}

  async put(event: EventRecord): Promise<void> {
    await this.db.doc.send(
      new PutCommand({ TableName: this.db.tableName, Item: eventItem(event), ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  }

  async get(shopId: string, eventId: string): Promise<EventRecord | null> {
    const out = await this.db.doc.send(new GetCommand({ TableName: this.db.tableName, Key: keys.event(shopId, eventId), ConsistentRead: true }));
    return out.Item ? eventFromItem(out.Item) : null; // data_json needs parsing: not getRecord
  }

  /** Newest first; with a type, through GSI1 rather than a filter. */
  async list(shopId: string, page: PageRequest, type?: string): Promise<Page<EventRecord>> {
    const query = type
      ? { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': keys.eventByType(shopId, type, '').gsi1pk } }
      : {
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': shopPk(shopId), ':prefix': skPrefix.event },
        };
    const result = await queryPage(this.db, { ...query, ScanIndexForward: false }, page);
    return { items: result.items.map(eventFromItem), next: result.next };
  }
}
