import { fanOut, fanOutDeliveryId, newDelivery, type FanOutDeps } from '../../shared/delivery/fan-out';
import type { DeliveryMessage } from '../../shared/delivery/records';
import { DynamoFanoutDeliveryStore } from '../../shared/delivery/dynamo/fanout-deliveries';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { newEvent, type EventRecord } from '../../shared/domain/events';
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

  /** The stream's fan-out on the table, with its messages kept in `queued`. */
  const fanOutDeps = (rows: DynamoFanoutDeliveryStore, queued: DeliveryMessage[]): FanOutDeps => ({
    endpoints: deps.endpoints,
    deliveries: rows,
    queue: { send: async (messages) => void queued.push(...messages) },
    order: new DynamoOrderStore(deps.db),
    scheduler: { schedule: async () => undefined, needsSchedule: () => false },
    timeScale: 1,
    now: () => new Date(),
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
      [kept!, stopped!].map((e) =>
        newDelivery(event, {
          id: fanOutDeliveryId(event.id, e.id),
          endpointId: e.id,
          origin: 'fanout',
          now: new Date(),
        }),
      ),
    );
    await deps.endpoints.update(shop.id, stopped!.id, { enabled: false }, new Date().toISOString());

    const queued: DeliveryMessage[] = [];
    const retry = fanOutDeps(rows, queued);
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

  it('sends the row its first try wrote unrecorded for its first attempt when the circuit opened since: no wake-up for a second it has not reached', async () => {
    const shop = await createShop(deps, { name: 'Open Shop', owner_email: 'o@open.test' });
    const made = new Date(Date.now() - 60_000);
    const endpoint = await createEndpoint(
      { ...deps, now: () => made, checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }) },
      shop.id,
      { url: 'https://hooks.example.com/open', events: ['call.completed'] },
    );
    const event = newEvent(shop.id, 'call.completed', { id: newId('call'), object: 'call' }, new Date());
    await deps.events.put(event);
    const rows = new DynamoFanoutDeliveryStore(deps.db);
    const id = fanOutDeliveryId(event.id, endpoint!.id);
    // The first try: the row written with the circuit closed, then it died before its message went.
    await rows.createMissing([newDelivery(event, { id, endpointId: endpoint!.id, origin: 'fanout', now: new Date() })]);

    // The retry reads the circuit open, its next probe not due: a new row would have its first attempt recorded.
    const queued: DeliveryMessage[] = [];
    const scheduled: DeliveryMessage[] = [];
    const probeLater = new Date(Date.now() + 60_000).toISOString();
    const retry: FanOutDeps = {
      ...fanOutDeps(rows, queued),
      endpoints: {
        list: async (shopId) =>
          (await deps.endpoints.list(shopId)).map((e) => ({
            ...e,
            health: { ...e.health, circuit: 'open' as const, consecutive_failures: 5, next_probe_at: probeLater },
          })),
      },
      scheduler: { schedule: async (m) => void scheduled.push(m), needsSchedule: () => true },
    };
    await fanOut(retry, event);
    expect(queued.map((m) => [m.delivery_id, m.attempt])).toEqual([[id, 1]]);
    expect(scheduled).toEqual([]);
    expect(
      await new DynamoDeliveryStore(deps.db).get({ shop_id: shop.id, endpoint_id: endpoint!.id, id }),
    ).toMatchObject({ attempts: 0, status: 'pending' });
  });

  it('joins an ordered row its first try wrote (and put in the due index) to its chain: a later event of the resource waits behind it', async () => {
    const shop = await createShop(deps, { name: 'Order Retry Shop', owner_email: 'o@order-retry.test' });
    const made = new Date(Date.now() - 60_000);
    const endpointDeps = {
      ...deps,
      now: () => made,
      checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }),
    };
    const endpoint = await createEndpoint(endpointDeps, shop.id, {
      url: 'https://hooks.example.com/ordered',
      events: ['job.created', 'job.approved'],
      ordering: 'per_resource',
    });
    const job = { id: newId('job'), object: 'job' };
    const created = newEvent(shop.id, 'job.created', job, new Date(Date.now() - 2_000));
    const approved = newEvent(shop.id, 'job.approved', job, new Date(Date.now() - 1_000));
    for (const e of [created, approved]) await deps.events.put(e);
    const rows = new DynamoFanoutDeliveryStore(deps.db);
    const rowOf = (e: EventRecord) => ({
      ...newDelivery(e, {
        id: fanOutDeliveryId(e.id, endpoint.id),
        endpointId: endpoint.id,
        origin: 'fanout',
        now: new Date(),
      }),
      order_key: job.id,
    });
    // The first try of job.created: its row written, its chain's write failed, so the row went into the due index.
    await rows.createMissing([rowOf(created)]);
    await rows.index(rowOf(created), new Date(Date.now() + 60_000));

    const queued: DeliveryMessage[] = [];
    const stream = fanOutDeps(rows, queued);
    await fanOut(stream, created);
    await fanOut(stream, approved);
    // job.created is the sweeper's to send (it is in the due index); job.approved waits behind it.
    expect(queued).toEqual([]);
    const later = await new DynamoDeliveryStore(deps.db).get({
      shop_id: shop.id,
      endpoint_id: endpoint.id,
      id: fanOutDeliveryId(approved.id, endpoint.id),
    });
    expect(later?.held_by).toBe(fanOutDeliveryId(created.id, endpoint.id));
  });
});
