import { fanOutDeliveryId, newDelivery } from '../../shared/delivery/fan-out';
import { type DeliveryRecord } from '../../shared/delivery/records';
import { deleteEndpoint } from '../../shared/domain/endpoint-lifecycle';
import { getEvent } from '../../shared/domain/event-log';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { redeliver } from '../../shared/delivery/redeliver';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import { deliveryItem } from '../../shared/delivery/dynamo/attempt-deliveries';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoDueIndex } from '../../shared/delivery/dynamo/due-index';
import { keys } from '../../shared/store/keys';
import { observeTable } from '../../shared/store/client';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

/** Delivery rows under their endpoint: the endpoint's list, and an event's deliveries by key. */
describe('delivery rows (DynamoDB Local)', () => {
  let deps: Deps;
  let store: DynamoDeliveryStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
  });

  async function tenant(endpoints = 1) {
    const shop = await createShop(deps, { name: 'Rows Shop', owner_email: 'o@rows.test' });
    const made = new Date(Date.now() - 120_000);
    const endpointDeps = {
      ...deps,
      now: () => made,
      checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }),
    };
    const ids: string[] = [];
    for (let i = 0; i < endpoints; i++)
      ids.push(
        (
          await createEndpoint(endpointDeps, shop.id, {
            url: `https://hooks.example.com/${i}`,
            events: ['call.completed'],
          })
        ).id,
      );
    return { shopId: shop.id, endpointIds: ids };
  }

  /** An event of `agoMs` ago and its fan-out rows (derived ids), in the given status. */
  async function fannedOut(
    shopId: string,
    endpointIds: string[],
    agoMs: number,
    status: DeliveryRecord['status'] = 'pending',
  ): Promise<{ event: EventRecord; rows: DeliveryRecord[] }> {
    const at = new Date(Date.now() - agoMs);
    const event = newEvent(shopId, 'call.completed', { id: newId('call', at.getTime()), object: 'call' }, at);
    await deps.events.put(event);
    const rows = endpointIds.map((id) => ({
      ...newDelivery(event, { id: fanOutDeliveryId(event.id, id), endpointId: id, origin: 'fanout', now: at }),
      status,
      ...(status === 'pending' ? {} : { attempts: 1, sweep_at: null }),
    }));
    await store.createAll(rows);
    return { event, rows };
  }

  /** Every page of the endpoint's list, following the cursor. */
  async function allPages(shopId: string, endpointId: string, limit: number, status?: DeliveryRecord['status']) {
    const pages: string[][] = [];
    let after: Record<string, unknown> | undefined;
    do {
      const page = await store.listForEndpoint(shopId, endpointId, { limit, after }, status);
      pages.push(page.items.map((d) => d.id));
      after = page.next;
    } while (after);
    return pages;
  }

  it("lists an endpoint's deliveries newest first across pages, with and without a status filter, and only its own", async () => {
    const { shopId, endpointIds } = await tenant(2);
    const [mine, other] = endpointIds as [string, string];
    const made: DeliveryRecord[] = [];
    for (let i = 0; i < 7; i++)
      made.push(
        ...(await fannedOut(shopId, [mine, other], 60_000 - i * 1000, i % 3 === 0 ? 'succeeded' : 'pending')).rows,
      );
    // Newest first is id order, descending (a fan-out id carries its event's time, then a hash).
    const descending = (ids: string[]) => [...ids].sort().reverse();
    const newestFirst = descending(made.filter((d) => d.endpoint_id === mine).map((d) => d.id));

    const pages = await allPages(shopId, mine, 3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(newestFirst);

    const succeeded = descending(
      made.filter((d) => d.endpoint_id === mine && d.status === 'succeeded').map((d) => d.id),
    );
    expect(succeeded).toHaveLength(3);
    const filtered = await allPages(shopId, mine, 2, 'succeeded');
    expect(filtered.flat()).toEqual(succeeded);
    expect(filtered.length).toBeGreaterThanOrEqual(2);
  });

  it("GET event lists the fan-out's rows, every redelivery, and the rows of an endpoint deleted since", async () => {
    const { shopId, endpointIds } = await tenant(2);
    const [kept, deleted] = endpointIds as [string, string];
    const { event, rows } = await fannedOut(shopId, [kept, deleted], 30_000, 'succeeded');
    const redeliverDeps = { ...deps, timeScale: 1 };
    const first = await redeliver(redeliverDeps, shopId, event.id, [kept]);
    // Its first attempt failed: the next redeliver replaces it rather than share it.
    const firstRow = first.deliveries[0] as { id: string };
    await deps.db.doc.update({
      TableName: deps.db.tableName,
      Key: keys.delivery(shopId, kept, firstRow.id),
      UpdateExpression: 'SET attempts = :one, #s = :retrying',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':one': 1, ':retrying': 'retrying' },
    });
    const second = await redeliver(redeliverDeps, shopId, event.id, [kept]);
    const again = [first.deliveries[0]?.id, second.deliveries[0]?.id] as string[];
    // The second supersedes the first (cancelled), so both are distinct rows of the pair.
    expect(new Set(again).size).toBe(2);
    await deleteEndpoint({ ...deps, now: () => new Date() }, shopId, deleted);

    const shown = await getEvent(deps, shopId, event.id);
    const byId = new Map(shown.deliveries.map((d) => [d.id, d]));
    expect([...byId.keys()].sort()).toEqual([...rows.map((d) => d.id), ...again].sort());
    expect(byId.get(fanOutDeliveryId(event.id, deleted))).toMatchObject({ endpoint_id: deleted, status: 'succeeded' });
    expect(byId.get(again[0] as string)).toMatchObject({ endpoint_id: kept, status: 'cancelled' });
    expect(byId.get(again[1] as string)).toMatchObject({ endpoint_id: kept, status: 'pending' });
    // The deleted endpoint's list is gone with it (404), but its trace keeps the event's list whole.
    const trace = await deps.db.doc.get({ TableName: deps.db.tableName, Key: keys.deletedEndpoint(shopId, deleted) });
    expect(trace.Item).toMatchObject({ endpoint_id: deleted, entity: 'deleted_webhook_endpoint' });
    expect(Number(trace.Item?.expires_at)).toBeGreaterThan(Date.now() / 1000 + 29 * 86_400);
  });

  it('no item carries an index entry of every delivery (gsi3): rows are keyed under their endpoint', async () => {
    const { shopId, endpointIds } = await tenant(1);
    const { event } = await fannedOut(shopId, endpointIds, 10_000, 'succeeded');
    await redeliver({ ...deps, timeScale: 1 }, shopId, event.id);
    const items = (await deps.db.doc.scan({ TableName: deps.db.tableName })).Items ?? [];
    const rows = items.filter((i) => i.entity === 'delivery' && i.shop_id === shopId);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.sk).toBe(keys.delivery(shopId, String(row.endpoint_id), String(row.id)).sk);
    expect(items.filter((i) => 'gsi3pk' in i || 'gsi3sk' in i)).toEqual([]);
    expect(Object.keys(deliveryItem(rows[0] as DeliveryRecord)).filter((k) => k.startsWith('gsi3'))).toEqual([]);
  });

  it("several events' deliveries to one endpoint read in two requests, each as reading the event alone finds it", async () => {
    const { shopId, endpointIds } = await tenant(2);
    const [mine, other] = endpointIds as [string, string];
    const sent = await fannedOut(shopId, [mine, other], 50_000, 'succeeded');
    const failed = await fannedOut(shopId, [mine, other], 40_000, 'failed');
    const between = await fannedOut(shopId, [other], 30_000, 'failed');
    const waiting = await fannedOut(shopId, [mine, other], 20_000);
    // Redelivered to both: each pair gets a marker naming a second row (its event's markers and the one between share the range read).
    await redeliver({ ...deps, timeScale: 1 }, shopId, failed.event.id);
    await redeliver({ ...deps, timeScale: 1 }, shopId, between.event.id);
    const none = newEvent(
      shopId,
      'call.completed',
      { id: newId('call'), object: 'call' },
      new Date(Date.now() - 10_000),
    );
    const ids = [waiting.event.id, sent.event.id, none.id, failed.event.id];

    const requests: string[] = [];
    const stop = observeTable(deps.db, (operation) => requests.push(operation));
    const many = await deps.currentDeliveries.ofEvents(shopId, ids, mine);
    stop();
    expect(requests.sort()).toEqual(['BatchGetItem', 'Query']);
    for (const id of ids) expect(many.get(id)).toEqual(await deps.currentDeliveries.ofEvent(shopId, id, [mine]));
    expect(many.get(failed.event.id)?.rows.map((d) => d.status)).toEqual(['failed', 'pending']);
    expect(many.get(failed.event.id)?.current.get(mine)).toBe(many.get(failed.event.id)?.rows[1]?.id);
    expect(many.get(none.id)).toEqual({ rows: [], current: new Map() });
    expect([...many.keys()].sort()).toEqual([...ids].sort());
    expect(await deps.currentDeliveries.ofEvents(shopId, [], mine)).toEqual(new Map());
  });

  it('a retried fan-out gets back the rows it made that are never attempted (the fan-out sends those on their fast path)', async () => {
    const { shopId, endpointIds } = await tenant(4);
    const at = new Date(Date.now() - 5_000);
    const event = newEvent(shopId, 'call.completed', { id: newId('call', at.getTime()), object: 'call' }, at);
    await deps.events.put(event);
    const rows = endpointIds.map((id) =>
      newDelivery(event, { id: fanOutDeliveryId(event.id, id), endpointId: id, origin: 'fanout', now: at }),
    );
    const [fast, indexed, attempted] = rows as [DeliveryRecord, DeliveryRecord, DeliveryRecord, DeliveryRecord];
    expect((await store.createMissing(rows.slice(0, 3))).map((d) => d.id)).toEqual([fast.id, indexed.id, attempted.id]);
    // A local start (or the dead-letter drain, or a failed send) put one in the due index: the sweeper sends it,
    // but a retry still joins it to its chain (fanOut's onFastPath leaves its message out).
    expect(await new DynamoDueIndex(deps.db).enter(indexed, new Date())).toBe(true);
    await deps.db.doc.update({
      TableName: deps.db.tableName,
      Key: keys.delivery(shopId, attempted.endpoint_id, attempted.id),
      UpdateExpression: 'SET attempts = :one, #status = :s',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':one': 1, ':s': 'succeeded' },
    });
    // The stream's retry of the same record: the fourth row is new; the attempted one is left alone.
    expect((await store.createMissing(rows)).map((d) => d.id).sort()).toEqual(
      [fast.id, indexed.id, rows[3]?.id].sort(),
    );
  });
});
