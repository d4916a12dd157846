import type { CurrentDeliveryStore, EventDeliveries } from '../current-delivery';
import type { DeliveryRecord } from '../deliveries';
import { EVENT_RETENTION_SECONDS } from '../../domain/events';
import { cancellationReasons, queryPrefix, stripKeys, type Dynamo } from '../../store/client';
import { cancelInput, deliveryItem, isDeliveryItem } from './attempt-deliveries';
import { keys, shopPk, skPrefix } from '../../store/keys';
import { TABLE } from '../../store/table';

/** The marker's entity: not `delivery`, so no reader of deliveries and no stream filter takes it for one. */
const MARKER = 'current_delivery';

/**
 * The current delivery of an event to an endpoint (shared/domain/current-delivery.ts): a
 * marker item beside the event's delivery rows, read with them by one Query and changed only
 * in the transaction that writes the delivery it names.
 */
export class DynamoCurrentDeliveries implements CurrentDeliveryStore {
  constructor(private readonly db: Dynamo) {}

  async ofEvent(shopId: string, eventId: string): Promise<EventDeliveries> {
    const items = await queryPrefix(this.db, shopPk(shopId), skPrefix.delivery(eventId));
    const current = new Map(items.filter((i) => i.entity === MARKER).map((i) => [String(i.endpoint_id), String(i.delivery_id)]));
    return { rows: items.filter(isDeliveryItem).map((i) => stripKeys<DeliveryRecord>(i)), current };
  }

  async replace(row: DeliveryRecord, expected: string | null, cancel: DeliveryRecord[]): Promise<boolean> {
    const marker = {
      ...keys.currentDelivery(row.shop_id, row.event_id, row.endpoint_id),
      entity: MARKER,
      shop_id: row.shop_id,
      event_id: row.event_id,
      endpoint_id: row.endpoint_id,
      delivery_id: row.id,
      updated_at: row.created_at,
      // It lives as long as the event's deliveries: a later redeliver of the event finds it.
      [TABLE.ttlAttribute]: Math.floor(Date.parse(row.created_at) / 1000) + EVENT_RETENTION_SECONDS,
    };
    const TableName = this.db.tableName;
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          { Put: { TableName, Item: deliveryItem(row), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName,
              Item: marker,
              ...(expected === null ? { ConditionExpression: 'attribute_not_exists(pk)' } : { ConditionExpression: 'delivery_id = :expected', ExpressionAttributeValues: { ':expected': expected } }),
            },
          },
          ...cancel.map((d) => ({ Update: { TableName, ...cancelInput(d, d.attempts) } })),
        ],
      });
      return true;
    } catch (err) {
      // A condition that no longer holds, or another transaction on the same items: either way someone else moved first.
      if (cancellationReasons(err)) return false;
      throw err;
    }
  }
}
