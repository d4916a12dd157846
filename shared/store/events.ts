import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { EVENT_RETENTION_SECONDS, type EventRecord } from '../domain/events';
import type { EventWriter } from '../domain/webhook-endpoints';
import type { EventReader } from '../domain/deliveries';
import type { Page, PageRequest } from '../domain/pagination';
import { stripKeys, type Dynamo } from './client';
import { queryPage } from './pagination';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';

/** The table item of an event: listed by shop and by type, expiring after 30 days. */
export function eventItem(event: EventRecord): Record<string, unknown> {
  return {
    ...keys.event(event.shop_id, event.id),
    ...keys.eventByType(event.shop_id, event.type, event.id),
    entity: 'event',
    [TABLE.ttlAttribute]: Math.floor(Date.parse(event.timestamp) / 1000) + EVENT_RETENTION_SECONDS,
    ...event,
  };
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
    return out.Item ? stripKeys<EventRecord>(out.Item) : null;
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
    return { items: result.items.map((i) => stripKeys<EventRecord>(i)), next: result.next };
  }
}
