import { newDelivery } from '../../shared/delivery/fan-out';
import { type DeliveryRecord } from '../../shared/delivery/records';
import type { AttemptUpdate, ReleaseChange } from '../../shared/delivery/ports';
import { bucketStart, STATS_BUCKET_MS, summarise } from '../../shared/delivery/endpoint-stats';
import { newEvent } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint, updateEndpoint, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { derivedId } from '../../shared/ids';
import { DynamoAttemptLedger } from '../../shared/delivery/dynamo/attempt-ledger';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoEndpointStatsStore } from '../../shared/delivery/dynamo/endpoint-stats';
import { DynamoEventStore } from '../../shared/store/events';
import { keys } from '../../shared/store/keys';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { admit, afterAttempt, HEALTHY, leaseToken, MAX_IN_FLIGHT, type Lease } from '../../shared/delivery/circuit';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { itemSize } from '../helpers/item-size';
import { useFreshTable } from '../helpers/table';

/** The endpoint's state item (WE#<id>#STATE) apart from its configuration (WE#<id>): its size, the stats its releases count. */
describe('endpoint state item (DynamoDB Local)', () => {
  let deps: Deps;
  let deliveries: DynamoDeliveryStore;
  let endpoints: DynamoEndpointStore;
  let ledger: DynamoAttemptLedger;
  let stats: DynamoEndpointStatsStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    deliveries = new DynamoDeliveryStore(deps.db);
    endpoints = new DynamoEndpointStore(deps.db);
    ledger = new DynamoAttemptLedger(deps.db);
    stats = new DynamoEndpointStatsStore(deps.db);
  });
  const checkUrl = async (url: string) => ({ ok: true as const, url: new URL(url) });
  const raw = async (key: { pk: string; sk: string }) =>
    (await deps.db.doc.get({ TableName: deps.db.tableName, Key: key, ConsistentRead: true })).Item;

  async function setUp(count: number, input: { url?: string; rate_limit?: number } = {}) {
    const shop = await createShop(deps, { name: 'State Shop', owner_email: 'o@state.test' });
    const created = await createEndpoint({ ...deps, checkUrl }, shop.id, {
      url: input.url ?? 'https://hooks.example.com/x',
      events: ['call.completed'],
      rate_limit: input.rate_limit,
    });
    const rows: DeliveryRecord[] = [];
    for (let i = 0; i < count; i++) {
      const now = new Date();
      const event = newEvent(shop.id, 'call.completed', { id: `call_${i}` }, now);
      await new DynamoEventStore(deps.db).put(event);
      rows.push(
        newDelivery(event, {
          id: derivedId('dlv', now.getTime(), `${event.id}/${created.id}`),
          endpointId: created.id,
          origin: 'fanout',
          now,
        }),
      );
    }
    await deliveries.createMissing(rows);
    return {
      shopId: shop.id,
      id: created.id,
      rows,
      read: async () => (await endpoints.get(shop.id, created.id)) as EndpointRecord,
    };
  }

  /** Admits `rows` and returns their leases. */
  async function admitAll(endpoint: EndpointRecord, rows: DeliveryRecord[]): Promise<Map<string, Lease>> {
    const admission = admit(
      endpoint,
      rows.map((r) => r.id),
      { now: Date.now(), leaseMs: 60_000, token: leaseToken },
    );
    expect(await endpoints.admit(endpoint, admission)).toBe(true);
    return new Map(admission.send.map((s) => [s.deliveryId, s.lease]));
  }

  const success = (at = new Date()): AttemptUpdate => {
    const entry = {
      attempt: 1,
      at: at.toISOString(),
      status: 204,
      duration_ms: 12,
      error: null,
      response_snippet: null,
    };
    return {
      status: 'succeeded',
      attempts: 1,
      last_attempt_at: entry.at,
      next_attempt_at: null,
      sweep_at: null,
      last_response_status: 204,
      last_error: null,
      entry,
    };
  };
  const succeeded = (endpoint: EndpointRecord): ReleaseChange => ({
    succeeded: true,
    counted: true,
    opens: false,
    health: afterAttempt(endpoint.health, { succeeded: true, probe: false, retryAfterMs: null }, Date.now(), 1),
  });
  const totals = async (e: { shopId: string; id: string }) => {
    const s = summarise(e.id, await stats.window(e.shopId, e.id, new Date()), { pending: 0, retrying: 0 });
    return { attempts: s.attempts, succeeded: s.succeeded };
  };
  const bucketItems = async (e: { shopId: string; id: string }) =>
    (
      await deps.db.doc.query({
        TableName: deps.db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.shop(e.shopId).pk, ':p': `WESTAT#${e.id}#` },
        ConsistentRead: true,
      })
    ).Items ?? [];

  it('stays under 1 KB with four leases, a rate window, a failing health and a bucket of counters, whatever the configuration', async () => {
    const e = await setUp(MAX_IN_FLIGHT, {
      url: `https://hooks.example.com/${'long-path/'.repeat(60)}`,
      rate_limit: 50,
    });
    await updateEndpoint({ ...deps, checkUrl }, e.shopId, e.id, { description: 'x'.repeat(400) });
    const leases = await admitAll(await e.read(), e.rows);
    expect(leases.size).toBe(MAX_IN_FLIGHT);
    const at = new Date().toISOString();
    await deps.db.doc.update({
      TableName: deps.db.tableName,
      Key: keys.endpointState(e.shopId, e.id),
      UpdateExpression:
        'SET health = :h, failing_since = :at, backlog_at = :at, rate_tail = :tail ADD s_attempts :n, s_succeeded :n, s_failed :n, s_deliveries_failed :n, s_l10 :n, s_l20 :n, s_l30 :n, s_l46 :n',
      ExpressionAttributeValues: {
        ':h': {
          ...HEALTHY,
          circuit: 'half_open',
          consecutive_failures: 12,
          last_success_at: at,
          last_failure_at: at,
          next_probe_at: at,
          probe_interval_ms: 300_000,
          unanswered: true,
        },
        ':at': at,
        ':tail': Date.now(),
        ':n': 12345,
      },
    });
    const state = (await raw(keys.endpointState(e.shopId, e.id))) as Record<string, unknown>;
    expect(Object.keys(state.leases as object)).toHaveLength(MAX_IN_FLIGHT);
    expect(Object.keys(state.rate_starts as object).length).toBeGreaterThan(0);
    expect(itemSize(state)).toBeLessThan(1024);
    // The configuration alone is over it: on one item, each admission and release would cost 2 units.
    expect(itemSize((await raw(keys.webhookEndpoint(e.shopId, e.id))) as Record<string, unknown>)).toBeGreaterThan(
      1024,
    );
  });

  it('a release counts the attempt on the state item once: a retried release counts nothing again', async () => {
    const e = await setUp(1);
    const [row] = e.rows as [DeliveryRecord];
    const endpoint = await e.read();
    const lease = (await admitAll(endpoint, [row])).get(row.id) as Lease;
    const admitted = await e.read();
    const update = success();
    expect(
      (
        await ledger.finish({
          delivery: row,
          update,
          endpoint: admitted,
          token: lease.token,
          change: succeeded(admitted),
        })
      ).recorded,
    ).toBe(true);
    // The same release again (its answer lost, say): the lease is gone, so it counts nothing.
    await endpoints.release(admitted, row.id, lease.token, succeeded(admitted), {
      attempts: [{ entry: update.entry, status: update.status }],
    });
    expect(await totals(e)).toEqual({ attempts: 1, succeeded: 1 });
    expect(await bucketItems(e)).toEqual([]);
    expect(await raw(keys.endpointState(e.shopId, e.id))).toMatchObject({
      s_attempts: 1,
      s_succeeded: 1,
      stats_bucket: bucketStart(new Date(update.entry.at)),
    });
  });

  it('a release in a later bucket moves the counters to their bucket item first, once, and GET stats sums both', async () => {
    const e = await setUp(2);
    const [a, b] = e.rows as [DeliveryRecord, DeliveryRecord];
    const earlier = bucketStart(new Date(Date.now() - 3 * STATS_BUCKET_MS));
    await deps.db.doc.update({
      TableName: deps.db.tableName,
      Key: keys.endpointState(e.shopId, e.id),
      UpdateExpression: 'SET stats_bucket = :b, s_attempts = :two, s_succeeded = :two, s_l5 = :two',
      ExpressionAttributeValues: { ':b': earlier, ':two': 2 },
    });
    const stale = await e.read();
    const leases = await admitAll(stale, [a, b]);
    const admitted = await e.read();
    expect(
      (
        await ledger.finish({
          delivery: a,
          update: success(),
          endpoint: admitted,
          token: (leases.get(a.id) as Lease).token,
          change: succeeded(admitted),
        })
      ).recorded,
    ).toBe(true);
    // A second consumer that read the state before the move: its move is refused, its count lands in the new bucket.
    expect(await stats.roll(admitted, bucketStart(new Date()))).toBe(false);
    expect(
      (
        await ledger.finish({
          delivery: b,
          update: success(),
          endpoint: admitted,
          token: (leases.get(b.id) as Lease).token,
          change: succeeded(admitted),
        })
      ).recorded,
    ).toBe(true);
    const items = await bucketItems(e);
    // The earlier bucket's counts as the roll's snapshot (absolute values: a roll written again never counts twice).
    expect(items.map((i) => [String(i.sk).endsWith(earlier), i.r_attempts, i.rl5])).toEqual([[true, 2, 2]]);
    expect(await raw(keys.endpointState(e.shopId, e.id))).toMatchObject({
      stats_bucket: bucketStart(new Date()),
      s_attempts: 2,
    });
    expect(await totals(e)).toEqual({ attempts: 4, succeeded: 4 });
  });

  it('a roll stopped between its two writes counts nothing twice, and a slower roll of the same bucket writes no older snapshot over a newer one', async () => {
    const e = await setUp(1);
    const earlier = bucketStart(new Date(Date.now() - 3 * STATS_BUCKET_MS));
    const state = (n: number) =>
      deps.db.doc.update({
        TableName: deps.db.tableName,
        Key: keys.endpointState(e.shopId, e.id),
        UpdateExpression: 'SET stats_bucket = :b, s_attempts = :n, s_succeeded = :n, s_l5 = :n',
        ExpressionAttributeValues: { ':b': earlier, ':n': n },
      });
    await state(3);
    const slow = await e.read();
    await state(5);
    const fresh = await e.read();
    // The snapshot is written, then the consumer dies before the state item begins the new bucket: the reader counts the state's 5 once.
    const snapshotOnly = {
      ...deps.db,
      doc: Object.assign(Object.create(deps.db.doc), {
        update: (input: { Key: { sk: string } }) =>
          input.Key.sk.startsWith('WESTAT#')
            ? deps.db.doc.update(input as never)
            : Promise.reject(new Error('crashed')),
      }),
    };
    await expect(new DynamoEndpointStatsStore(snapshotOnly).roll(fresh, bucketStart(new Date()))).rejects.toThrow(
      'crashed',
    );
    expect((await bucketItems(e)).map((i) => i.r_attempts)).toEqual([5]);
    expect(await totals(e)).toEqual({ attempts: 5, succeeded: 5 });
    // A consumer that read 3 before rolls late: refused on both writes; the newer snapshot stays.
    expect(await stats.roll(slow, bucketStart(new Date()))).toBe(false);
    expect((await bucketItems(e)).map((i) => i.r_attempts)).toEqual([5]);
    // The next roll finishes it: the snapshot again (same values), then the new bucket.
    expect(await stats.roll(fresh, bucketStart(new Date()))).toBe(true);
    expect((await bucketItems(e)).map((i) => i.r_attempts)).toEqual([5]);
    expect(await totals(e)).toEqual({ attempts: 5, succeeded: 5 });
  });

  it('no admission once the endpoint is disabled or deleted; a deleted endpoint gets no state item back', async () => {
    const e = await setUp(2);
    const [a, b] = e.rows as [DeliveryRecord, DeliveryRecord];
    const read = await e.read();
    await updateEndpoint({ ...deps, checkUrl }, e.shopId, e.id, { enabled: false });
    expect(
      await endpoints.admit(read, admit(read, [a.id], { now: Date.now(), leaseMs: 60_000, token: leaseToken })),
    ).toBe(false);
    await updateEndpoint({ ...deps, checkUrl }, e.shopId, e.id, { enabled: true });
    const stale = await e.read();
    expect(await endpoints.delete(e.shopId, e.id)).toBe(true);
    expect(
      await endpoints.admit(stale, admit(stale, [b.id], { now: Date.now(), leaseMs: 60_000, token: leaseToken })),
    ).toBe(false);
    expect(await raw(keys.endpointState(e.shopId, e.id))).toBeUndefined();
  });
});
