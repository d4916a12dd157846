import { EVENT_RETENTION_SECONDS, type EventRecord } from '../domain/events';
import type { EventWriter } from '../domain/webhook-endpoints';
import type { EventReader } from '../delivery/delivery-resource';
import type { NotificationClaims } from '../domain/notifications';
import type { Page, PageRequest, TimeFilter } from '../domain/pagination';
import { stripKeys, updateIf, type Dynamo } from './client';
import { queryPage } from './pagination';
import { createdKeyQuery } from './time-range';
import { gsi1Partition, keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';
import { idBound } from '../ids';

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

/**
 * The event of a table item or an unmarshalled stream image; the email's bookkeeping is not
 * part of it.
 */
export function eventFromItem(item: Record<string, unknown>): EventRecord {
  const {
    data_json,
    notified_at: _notified,
    notify_claim: _claim,
    notify_until: _until,
    ...rest
  } = stripKeys<
    Omit<EventRecord, 'data'> & {
      data_json: string;
      notified_at?: string;
      notify_claim?: string;
      notify_until?: string;
    }
  >(item);
  return { ...rest, data: JSON.parse(data_json) as Record<string, unknown> };
}

/** An event written alone (a test event); a function of its own so a writer needs none of the reads below. */
export async function putEvent(db: Dynamo, event: EventRecord): Promise<void> {
  await db.doc.put({
    TableName: db.tableName,
    Item: eventItem(event),
    ConditionExpression: 'attribute_not_exists(pk)',
  });
}

export class DynamoEventStore implements EventWriter, EventReader, NotificationClaims {
  constructor(private readonly db: Dynamo) {}

  put(event: EventRecord): Promise<void> {
    return putEvent(this.db, event);
  }

  async get(shopId: string, eventId: string): Promise<EventRecord | null> {
    const out = await this.db.doc.get({
      TableName: this.db.tableName,
      Key: keys.event(shopId, eventId),
      ConsistentRead: true,
    });
    return out.Item ? eventFromItem(out.Item) : null; // data_json needs parsing: not getRecord
  }

  /** `notify_claim` and `notify_until` on the event item; never creates an item for an event that is gone. */
  claimNotification(shopId: string, eventId: string, at: string, until: string): Promise<boolean> {
    return updateIf(this.db, {
      Key: keys.event(shopId, eventId),
      UpdateExpression: 'SET notify_claim = :at, notify_until = :until',
      ConditionExpression:
        'attribute_exists(pk) AND attribute_not_exists(notified_at) AND ' +
        '(attribute_not_exists(notify_until) OR notify_until < :at)',
      ExpressionAttributeValues: { ':at': at, ':until': until },
    });
  }

  /** Only our own claim: a later one stays. */
  async releaseNotification(shopId: string, eventId: string, at: string): Promise<void> {
    await updateIf(this.db, {
      Key: keys.event(shopId, eventId),
      UpdateExpression: 'REMOVE notify_claim, notify_until',
      ConditionExpression: 'notify_claim = :at',
      ExpressionAttributeValues: { ':at': at },
    });
  }

  async markNotified(shopId: string, eventId: string, at: string): Promise<void> {
    await updateIf(this.db, {
      Key: keys.event(shopId, eventId),
      UpdateExpression: 'SET notified_at = :at REMOVE notify_claim, notify_until',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':at': at },
    });
  }

  /** Events made between two times (ids are time-sortable), oldest first, a page at a time. */
  async listBetween(shopId: string, since: Date, until: Date, page: PageRequest): Promise<Page<EventRecord>> {
    const query = {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': shopPk(shopId),
        ':from': `${skPrefix.event}${idBound('evt', since.getTime(), 'first')}`,
        ':to': `${skPrefix.event}${idBound('evt', until.getTime(), 'last')}`,
      },
      ConsistentRead: true,
    };
    const result = await queryPage(this.db, query, page);
    return { items: result.items.map(eventFromItem), next: result.next };
  }

  /** Newest first; with a type, through GSI1 rather than a filter; a filter on creation time narrows the key range. */
  async list(shopId: string, page: PageRequest, type?: string, time: TimeFilter = {}): Promise<Page<EventRecord>> {
    const query = createdKeyQuery(
      type ? { gsi1pk: gsi1Partition.eventsByType(shopId, type) } : { pk: shopPk(shopId), skPrefix: skPrefix.event },
      'evt',
      time,
    );
    if (!query) return { items: [], next: undefined };
    const result = await queryPage(this.db, { ...query, ScanIndexForward: false }, page);
    return { items: result.items.map(eventFromItem), next: result.next };
  }
}
