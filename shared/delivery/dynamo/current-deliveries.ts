import type { CurrentDeliveryStore, EventDeliveries } from '../current-delivery';
import type { DeliveryRecord } from '../records';
import { EVENT_RETENTION_SECONDS } from '../../domain/events';
import { cancellationReasons, type Dynamo } from '../../store/client';
import { cancelInput, deliveryItem } from './attempt-deliveries';
import { keys } from '../../store/keys';
import { TABLE } from '../../store/table';
import { DynamoEventDeliveryStore, MARKER, type EventDeliveryItems } from './event-deliveries';

function seenIn({ rows, markers }: EventDeliveryItems): EventDeliveries {
  return { rows, current: new Map([...markers].map(([endpointId, m]) => [endpointId, m.delivery_id])) };
}

/**
 * The current delivery of an event to an endpoint (shared/delivery/current-delivery.ts): a
 * marker item per event and endpoint, changed only in the transaction that writes the delivery
 * it names. It also lists every delivery a redeliver or recover made for the pair
 * (`delivery_ids`): the rows sit under their endpoint, and the marker is how the event finds them.
 */
export class DynamoCurrentDeliveries implements CurrentDeliveryStore {
  private readonly eventDeliveries: DynamoEventDeliveryStore;

  constructor(private readonly db: Dynamo) {
    this.eventDeliveries = new DynamoEventDeliveryStore(db);
  }

  async ofEvent(shopId: string, eventId: string, endpointIds: readonly string[]): Promise<EventDeliveries> {
    return seenIn(await this.eventDeliveries.read(shopId, eventId, endpointIds));
  }

  async ofEvents(
    shopId: string,
    eventIds: readonly string[],
    endpointId: string,
  ): Promise<Map<string, EventDeliveries>> {
    const read = await this.eventDeliveries.readMany(shopId, eventIds, endpointId);
    return new Map([...read].map(([eventId, items]) => [eventId, seenIn(items)]));
  }

  async replace(row: DeliveryRecord, expected: string | null, cancel: DeliveryRecord[]): Promise<boolean> {
    const TableName = this.db.tableName;
    const marker = {
      TableName,
      Key: keys.currentDelivery(row.shop_id, row.event_id, row.endpoint_id),
      UpdateExpression:
        'SET entity = :entity, shop_id = :shop, event_id = :event, endpoint_id = :endpoint, ' +
        'delivery_id = :id, updated_at = :at, #ttl = :ttl, delivery_ids = ' +
        'list_append(if_not_exists(delivery_ids, :none), :ids)',
      ConditionExpression: expected === null ? 'attribute_not_exists(pk)' : 'delivery_id = :expected',
      ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
      ExpressionAttributeValues: {
        ':entity': MARKER,
        ':shop': row.shop_id,
        ':event': row.event_id,
        ':endpoint': row.endpoint_id,
        ':id': row.id,
        ':at': row.created_at,
        // It lives as long as the event's deliveries: a later redeliver of the event finds it.
        ':ttl': Math.floor(Date.parse(row.created_at) / 1000) + EVENT_RETENTION_SECONDS,
        ':none': [],
        ':ids': [row.id],
        ...(expected === null ? {} : { ':expected': expected }),
      },
    };
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          { Put: { TableName, Item: deliveryItem(row), ConditionExpression: 'attribute_not_exists(pk)' } },
          { Update: marker },
          ...cancel.map((d) => ({ Update: { TableName, ...cancelInput(d, d.attempts) } })),
        ],
      });
      return true;
    } catch (err) {
      // A condition that no longer holds, or another transaction on the same items: either way
      // someone else moved first.
      if (cancellationReasons(err)) return false;
      throw err;
    }
  }
}
