import { fanOut, fanOutDeliveryId, newDelivery, type FanOutDeps } from '../../shared/delivery/deliveries';
import type { DeliveryMessage } from '../../shared/delivery/delivery-records';
import { DynamoFanoutDeliveryStore } from '../../shared/delivery/dynamo/fanout-deliveries';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { newEvent } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

/** A stream record fanned out again after a try that wrote its rows and died before their messages went. */
describe('a retried fan-out (DynamoDB Local)', () => {
  let deps: ApiDeps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });

  it('sends the row it wrote for an endpoint disabled since (the consumer then cancels it): no row is left without a wake-up', async () => {
    const shop = await createShop(deps, { name: 'Retry Shop', owner_email: 'o@retry.test' });
    const made = new Date(Date.now() - 60_000);
    const endpointDeps = {
      ...deps,
      now: () => made,
      checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }),
    };
    const [kept, stopped] = await Promise.all(
      ['kept', 'stopped'].map((name) =>
        createEndpoint(endpointDeps, shop.id, { url: `https://hooks.example.com/${name}`, events: ['call.completed'] }),
      ),
    );
    const event = newEvent(shop.id, 'call.completed', { id: newId('call'), object: 'call' }, new Date());
    await deps.events.put(event);
    const rows = new DynamoFanoutDeliveryStore(deps.db);
    // The first try: both rows written, then it died.
    await rows.createMissing(
      [kept!, stopped!].map((e) => newDelivery(event, e.id, fanOutDeliveryId(event.id, e.id), 'fanout', new Date())),
    );
    await deps.endpoints.update(shop.id, stopped!.id, { enabled: false }, new Date().toISOString());

    const queued: DeliveryMessage[] = [];
    const retry: FanOutDeps = {
      endpoints: deps.endpoints,
      deliveries: rows,
      queue: { send: async (messages) => void queued.push(...messages) },
      order: new DynamoOrderStore(deps.db),
      scheduler: { schedule: async () => undefined, needsSchedule: () => false },
      timeScale: 1,
      now: () => new Date(),
    };
    await fanOut(retry, event);
    expect(queued.map((m) => m.endpoint_id).sort()).toEqual([kept!.id, stopped!.id].sort());

    // A row that was attempted, or is in the due index, is left to its own wake-ups.
    queued.length = 0;
    await rows.index(
      { ...event, id: fanOutDeliveryId(event.id, stopped!.id), endpoint_id: stopped!.id, event_id: event.id },
      new Date(),
    );
    await fanOut(retry, event);
    expect(queued.map((m) => m.endpoint_id)).toEqual([kept!.id]);
  });
});
