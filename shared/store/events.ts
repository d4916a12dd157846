import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { EVENT_RETENTION_SECONDS, type EventRecord } from '../domain/events';
import type { EventWriter } from '../domain/webhook-endpoints';
import type { Dynamo } from './client';
import { keys } from './keys';
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

export class DynamoEventStore implements EventWriter {
  constructor(private readonly db: Dynamo) {}

  async put(event: EventRecord): Promise<void> {
    await this.db.doc.send(
      new PutCommand({ TableName: this.db.tableName, Item: eventItem(event), ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  }
}
