import { fanOutDeliveryId, newDelivery } from '../../shared/delivery/fan-out';
import type { DeliveryRecord } from '../../shared/delivery/records';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { newEvent } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import type { CreateEndpointInput } from '../../shared/domain/webhook-endpoints-schema';
import { DynamoEventStore } from '../../shared/store/events';
import type { ApiDeps } from '../../shared/wiring/api';

/**
 * A new shop's endpoint for `call.completed` (with `settings` on top) and `count` of its events,
 * each with its delivery row pending as the fan-out writes it (`shape` changes a row before it is
 * written).
 */
export async function endpointWithPending(
  deps: ApiDeps,
  count: number,
  opts: { settings?: Partial<CreateEndpointInput>; shape?: (row: DeliveryRecord) => DeliveryRecord } = {},
) {
  const shop = await createShop(deps, { name: 'Pending Shop', owner_email: 'o@pending.test' });
  const endpoint = await createEndpoint(
    { ...deps, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) },
    shop.id,
    { url: 'https://hooks.example.com/x', events: ['call.completed'], ...opts.settings },
  );
  const events = new DynamoEventStore(deps.db);
  const rows: DeliveryRecord[] = [];
  for (let i = 0; i < count; i++) {
    const now = new Date();
    const event = newEvent(shop.id, 'call.completed', { id: `call_${i}` }, now);
    await events.put(event);
    const row = newDelivery(event, {
      id: fanOutDeliveryId(event.id, endpoint.id),
      endpointId: endpoint.id,
      origin: 'fanout',
      now,
    });
    rows.push(opts.shape ? opts.shape(row) : row);
  }
  await new DynamoDeliveryStore(deps.db).createMissing(rows);
  return { shop, endpoint, rows };
}
