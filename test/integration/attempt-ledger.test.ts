import { randomUUID } from 'node:crypto';
import { type DeliveryRecord } from '../../shared/delivery/records';
import type { AttemptUpdate, Carried, ReleaseChange } from '../../shared/delivery/ports';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { DynamoAttemptLedger } from '../../shared/delivery/dynamo/attempt-ledger';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoEndpointStatsStore } from '../../shared/delivery/dynamo/endpoint-stats';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { admit, afterAttempt, MAX_IN_FLIGHT, type Lease } from '../../shared/delivery/circuit';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';
import { observeTable } from '../../shared/store/client';
import { emptyAdmission } from '../helpers/admission';
import { endpointWithPending } from '../helpers/pending-deliveries';

/**
 * The end of an attempt: single-item writes when it ends alone; one transaction when it also ends
 * other runs' slots and counts their attempts (the endpoint as usual), the separate writes
 * otherwise; the same result either way.
 */
describe('attempt ledger (DynamoDB Local)', () => {
  let deps: Deps;
  let deliveries: DynamoDeliveryStore;
  let endpoints: DynamoEndpointStore;
  let ledger: DynamoAttemptLedger;
  beforeAll(async () => {
    deps = await useFreshTable();
    deliveries = new DynamoDeliveryStore(deps.db);
    endpoints = new DynamoEndpointStore(deps.db);
    ledger = new DynamoAttemptLedger(deps.db);
  });

  /** An endpoint with `count` pending deliveries, the first `leased` of them admitted (leases taken). */
  async function setUp(count: number, leased = 1) {
    const { shop, endpoint: created, rows } = await endpointWithPending(deps, count);
    const endpoint = (await endpoints.get(shop.id, created.id)) as EndpointRecord;
    const admission = admit(
      endpoint,
      rows.slice(0, leased).map((r) => r.id),
      { now: Date.now(), leaseMs: 60_000, token: randomUUID },
    );
    expect(await endpoints.admit(endpoint, admission)).toBe(true);
    const leases = new Map(admission.send.map((s) => [s.deliveryId, s.lease]));
    return {
      rows,
      endpoint: (await endpoints.get(shop.id, created.id)) as EndpointRecord,
      lease: (r: DeliveryRecord) => leases.get(r.id) as Lease,
    };
  }

  const update = (succeeded: boolean, attempt = 1): AttemptUpdate => {
    const at = new Date().toISOString();
    const entry = {
      attempt,
      at,
      status: succeeded ? 204 : 500,
      duration_ms: 12,
      error: succeeded ? null : 'HTTP 500',
      response_snippet: null,
    };
    return {
      status: succeeded ? 'succeeded' : 'retrying',
      attempts: attempt,
      last_attempt_at: at,
      next_attempt_at: succeeded ? null : at,
      sweep_at: succeeded ? null : at,
      last_response_status: entry.status,
      last_error: entry.error,
      entry,
    };
  };
  const change = (endpoint: EndpointRecord, succeeded: boolean, extra: Partial<ReleaseChange> = {}): ReleaseChange => ({
    succeeded,
    counted: true,
    opens: false,
    health: afterAttempt(endpoint.health, { succeeded, probe: false, retryAfterMs: null }, Date.now(), 1),
    ...extra,
  });
  /** The end of a successful attempt of `d`, with what other runs `carried` (nothing: alone on its endpoint). */
  const finishSuccess = (
    d: DeliveryRecord,
    endpoint: EndpointRecord,
    lease: (r: DeliveryRecord) => Lease,
    carried?: Carried,
  ) =>
    ledger.finish({
      delivery: d,
      update: update(true),
      endpoint,
      token: lease(d).token,
      change: change(endpoint, true),
      ...(carried ? { carried } : {}),
    });
  const statsOf = async (endpoint: EndpointRecord) => {
    const buckets = await new DynamoEndpointStatsStore(deps.db).window(endpoint.shop_id, endpoint.id, new Date());
    return buckets.reduce(
      (sum, b) => ({ attempts: sum.attempts + b.attempts, succeeded: sum.succeeded + b.succeeded }),
      { attempts: 0, succeeded: 0 },
    );
  };

  /** The table requests `run` sends, by command name. */
  async function requests(run: () => Promise<unknown>): Promise<string[]> {
    const sent: string[] = [];
    const unwatch = observeTable(deps.db, (operation) => sent.push(operation));
    try {
      await run();
    } finally {
      unwatch();
    }
    return sent;
  }

  it(
    'records a success, counts it and drops the lease, as ' +
      'single-item writes (no transaction to bill each item twice)',
    async () => {
      const { rows, endpoint, lease } = await setUp(1);
      const first = rows[0] as DeliveryRecord;
      let finished;
      const sent = await requests(async () => (finished = await finishSuccess(first, endpoint, lease)));
      // The row, then the endpoint's state item: lease, health and the stats in one write.
      expect(sent).toEqual(['UpdateItem', 'UpdateItem']);
      expect(finished).toEqual({ recorded: true, released: { circuitBefore: 'closed', backlog: false } });
      expect(await deliveries.get(first)).toMatchObject({ status: 'succeeded', attempts: 1 });
      const after = await endpoints.get(endpoint.shop_id, endpoint.id);
      expect(after?.leases).toEqual({});
      expect(after?.health.last_success_at).not.toBeNull();
      expect(await statsOf(endpoint)).toEqual({ attempts: 1, succeeded: 1 });
    },
  );

  it(
    'an attempt under way when its row is cancelled is logged ' +
      'on the row, which stays cancelled (alone, and in a run)',
    async () => {
      const { rows, endpoint, lease } = await setUp(2, 2);
      const [alone, inRun] = rows as [DeliveryRecord, DeliveryRecord];
      // Cancelled as the endpoint's disable or a recover's supersede does, with the attempt's request on its way.
      expect(await deliveries.cancel(alone)).toBe(true);
      expect(await deliveries.cancel(inRun)).toBe(true);
      const finished = await finishSuccess(alone, endpoint, lease);
      expect(finished.recorded).toBe(false);
      expect(await ledger.recordInRun(inRun, update(false))).toBe(false);
      expect(await deliveries.get(alone)).toMatchObject({
        status: 'cancelled',
        attempts: 1,
        last_response_status: 204,
        history: [expect.objectContaining({ attempt: 1, status: 204 })],
      });
      expect(await deliveries.get(inRun)).toMatchObject({
        status: 'cancelled',
        attempts: 1,
        last_response_status: 500,
        next_attempt_at: null,
        history: [expect.objectContaining({ attempt: 1, status: 500 })],
      });
      // Logged once: the same attempt's end coming twice writes nothing more.
      expect(await ledger.recordInRun(inRun, update(false))).toBe(false);
      expect((await deliveries.get(inRun))?.history).toHaveLength(1);
      expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases).not.toHaveProperty(alone.id);
    },
  );

  /**
   * Two runs on two slots: A (rows[0]) and B (leased for rows[1], which recorded rows[1] and then rows[2] on its rows
   * alone, and ended first).
   */
  async function runsOf() {
    const { rows, endpoint, lease } = await setUp(3, 2);
    const [a, b, c] = rows as [DeliveryRecord, DeliveryRecord, DeliveryRecord];
    const inRun = [update(true), update(true)];
    const sent = await requests(async () => {
      expect(await ledger.recordInRun(b, inRun[0] as AttemptUpdate)).toBe(true);
      expect(await ledger.recordInRun(c, inRun[1] as AttemptUpdate)).toBe(true);
    });
    const carried: Carried = {
      attempts: inRun.map((u) => ({ entry: u.entry, status: u.status })),
      slots: [{ key: b.id, token: lease(b).token }],
      deliveries: [],
    };
    return { a, b, c, endpoint, lease, carried, sent };
  }

  it(
    "a run records its successes on their rows alone; the last run's end " +
      'releases every slot and counts every attempt, in one transaction',
    async () => {
      const { a, b, c, endpoint, lease, carried, sent: inRun } = await runsOf();
      expect(inRun).toEqual(['UpdateItem', 'UpdateItem']);
      expect(await deliveries.get(c)).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(await statsOf(endpoint)).toEqual({ attempts: 0, succeeded: 0 });
      expect(Object.keys((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases ?? {}).sort()).toEqual(
        [a.id, b.id].sort(),
      );

      let finished;
      const sent = await requests(async () => (finished = await finishSuccess(a, endpoint, lease, carried)));
      expect(sent).toEqual(['TransactWriteItems']);
      expect(finished).toEqual({ recorded: true, released: { circuitBefore: 'closed', backlog: false } });
      expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases).toEqual({});
      expect(await statsOf(endpoint)).toEqual({ attempts: 3, succeeded: 3 });
    },
  );

  it(
    "a run's end whose row was cancelled meanwhile logs it " + "there, still releases every slot and counts the runs'",
    async () => {
      const { a, endpoint, lease, carried } = await runsOf();
      expect(await deliveries.cancel(a)).toBe(true);
      const finished = await finishSuccess(a, endpoint, lease, carried);
      expect(finished.recorded).toBe(false);
      expect(await deliveries.get(a)).toMatchObject({ status: 'cancelled', attempts: 1, last_response_status: 204 });
      expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases).toEqual({});
      expect(await statsOf(endpoint)).toEqual({ attempts: 2, succeeded: 2 });
    },
  );

  it('an attempt another consumer recorded first writes nothing more on its row (no log as if cancelled)', async () => {
    const { rows, endpoint, lease } = await setUp(1);
    const first = rows[0] as DeliveryRecord;
    expect(await deliveries.recordAttempt(first, update(true))).toBe(true);
    const sent = await requests(() => finishSuccess(first, endpoint, lease));
    expect(sent.filter((op) => op === 'UpdateItem')).toHaveLength(2); // the row's refused record, then the release
  });

  it(
    'a carried slot that is no longer ours is left to ' + 'its holder; the rest is written as separate writes',
    async () => {
      const { a, b, endpoint, lease, carried } = await runsOf();
      const current = (await endpoints.get(endpoint.shop_id, endpoint.id)) as EndpointRecord;
      const stolen = { taken: Date.now(), until: Date.now() + 60_000, token: 'someone-else', probe: false };
      // Taken again as `admit` does when a lease has expired: dropped and written anew.
      expect(
        await endpoints.admit(
          current,
          emptyAdmission({ send: [{ deliveryId: b.id, lease: stolen }], expired: [b.id], health: current.health }),
        ),
      ).toBe(true);
      const finished = await finishSuccess(a, endpoint, lease, carried);
      expect(finished.recorded).toBe(true);
      const after = await endpoints.get(endpoint.shop_id, endpoint.id);
      expect(after?.leases).toEqual({ [b.id]: stolen });
      expect(await statsOf(endpoint)).toEqual({ attempts: 3, succeeded: 3 });
    },
  );

  it("what runs carried is released on its own when no attempt's end could take it", async () => {
    const { b, endpoint, carried, lease } = await runsOf();
    await ledger.releaseCarried(endpoint, carried);
    expect(Object.keys((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases ?? {})).not.toContain(b.id);
    expect(lease(b).token).toBe(carried.slots[0]?.token);
    expect(await statsOf(endpoint)).toEqual({ attempts: 2, succeeded: 2 });
  });

  it('counts a failure on the endpoint in its release', async () => {
    const { rows, endpoint, lease } = await setUp(1);
    const first = rows[0] as DeliveryRecord;
    const sent = await requests(() =>
      ledger.finish({
        delivery: first,
        update: update(false),
        endpoint,
        token: lease(first).token,
        change: change(endpoint, false, { failingSince: new Date().toISOString() }),
      }),
    );
    expect(sent).toEqual(['UpdateItem', 'UpdateItem']); // the row, then the state item (its release counts the attempt)
    const after = await endpoints.get(endpoint.shop_id, endpoint.id);
    expect(after?.health).toMatchObject({ circuit: 'closed', consecutive_failures: 1 });
    expect(after?.failing_since).not.toBeNull();
    expect(after?.leases).toEqual({});
    expect(await deliveries.get(first)).toMatchObject({ status: 'retrying', attempts: 1 });
  });

  it('a success alone on an endpoint marked as having a backlog takes the mark and reports it', async () => {
    const { rows, endpoint, lease } = await setUp(1);
    const first = rows[0] as DeliveryRecord;
    await endpoints.markBacklog(endpoint, new Date().toISOString());
    const finished = await finishSuccess(first, endpoint, lease);
    expect(finished).toEqual({ recorded: true, released: { circuitBefore: 'closed', backlog: true } });
    expect(await endpoints.get(endpoint.shop_id, endpoint.id)).not.toHaveProperty('backlog_at');
    expect(await statsOf(endpoint)).toEqual({ attempts: 1, succeeded: 1 });
  });

  it("a run's end on an endpoint marked as having a backlog takes the mark, in one more transaction", async () => {
    const { a, endpoint, lease, carried } = await runsOf();
    await endpoints.markBacklog(endpoint, new Date().toISOString());
    let finished;
    const sent = await requests(async () => (finished = await finishSuccess(a, endpoint, lease, carried)));
    expect(sent).toEqual(['TransactWriteItems', 'TransactWriteItems']); // cancelled, then the one that expects the mark
    expect(finished).toMatchObject({ recorded: true, released: { circuitBefore: 'closed', backlog: true } });
    expect(await endpoints.get(endpoint.shop_id, endpoint.id)).not.toHaveProperty('backlog_at');
    expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases).toEqual({});
    expect(await deliveries.get(a)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(await statsOf(endpoint)).toEqual({ attempts: 3, succeeded: 3 });
  });

  it("a run's end on an endpoint read with its backlog mark takes it in one transaction", async () => {
    const { a, endpoint, lease, carried } = await runsOf();
    await endpoints.markBacklog(endpoint, new Date().toISOString());
    const read = (await endpoints.get(endpoint.shop_id, endpoint.id)) as EndpointRecord;
    expect(read.backlog_at).toBeDefined();
    let finished;
    const sent = await requests(
      async () =>
        (finished = await ledger.finish({
          delivery: a,
          update: update(true),
          endpoint: read,
          token: lease(a).token,
          change: change(read, true),
          carried,
        })),
    );
    expect(sent).toEqual(['TransactWriteItems']);
    expect(finished).toMatchObject({ recorded: true, released: { backlog: true } });
    expect(await endpoints.get(endpoint.shop_id, endpoint.id)).not.toHaveProperty('backlog_at');
  });

  it(
    'admits batches that read a healthy endpoint at the same moment ' +
      'while there is room: never past the cap, never one delivery twice',
    async () => {
      const { rows, endpoint } = await setUp(7, 0);
      const read = endpoint;
      const one = (id: string) => admit(read, [id], { now: Date.now(), leaseMs: 60_000, token: randomUUID });
      // Six batches, each with the endpoint as read before any of them wrote.
      const admitted = await Promise.all(rows.slice(0, 6).map((r) => endpoints.admit(read, one(r.id))));
      expect(admitted.filter(Boolean)).toHaveLength(MAX_IN_FLIGHT);
      const after = (await endpoints.get(endpoint.shop_id, endpoint.id)) as EndpointRecord;
      expect(Object.keys(after.leases)).toHaveLength(MAX_IN_FLIGHT);
      expect(after.lease_version).toBe(read.lease_version + MAX_IN_FLIGHT);
    },
  );

  it(
    'does not admit a delivery whose lease another batch took ' +
      'since the read (a duplicate message), though there is room',
    async () => {
      const { rows, endpoint, lease } = await setUp(2, 1);
      const first = rows[0] as DeliveryRecord;
      // The endpoint as a second batch read it just before the first batch's admission.
      const stale = { ...endpoint, leases: {} };
      const duplicate = admit(stale, [first.id], { now: Date.now(), leaseMs: 60_000, token: randomUUID });
      expect(duplicate.send.map((s) => s.deliveryId)).toEqual([first.id]);
      expect(await endpoints.admit(stale, duplicate)).toBe(false);
      expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases[first.id]?.token).toBe(lease(first).token);
    },
  );

  it('a probe that succeeds reports the circuit it closed', async () => {
    const { rows, endpoint, lease } = await setUp(1);
    const first = rows[0] as DeliveryRecord;
    const opened = { ...endpoint.health, circuit: 'half_open' as const, consecutive_failures: 5 };
    await endpoints.admit({ ...endpoint }, emptyAdmission({ health: opened }));
    const current = (await endpoints.get(endpoint.shop_id, endpoint.id)) as EndpointRecord;
    const finished = await ledger.finish({
      delivery: first,
      update: update(true),
      endpoint: current,
      token: lease(first).token,
      change: change(current, true),
    });
    expect(finished.released.circuitBefore).toBe('half_open');
    expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.health).toMatchObject({
      circuit: 'closed',
      consecutive_failures: 0,
    });
  });

  it(
    'an attempt another consumer recorded first is not ' + 'recorded or counted again, and our lease still goes',
    async () => {
      const { rows, endpoint, lease } = await setUp(1);
      const first = rows[0] as DeliveryRecord;
      expect(await deliveries.recordAttempt(first, update(true))).toBe(true);
      const finished = await finishSuccess(first, endpoint, lease);
      expect(finished.recorded).toBe(false);
      expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases).toEqual({});
      expect(await statsOf(endpoint)).toEqual({ attempts: 1, succeeded: 1 });
      expect((await deliveries.get(first))?.history).toHaveLength(1);
    },
  );

  it('a failure that a later success overtook on its way to the table is not counted as consecutive', async () => {
    const { rows, endpoint, lease } = await setUp(2, 2);
    const [failed, succeeded] = rows as [DeliveryRecord, DeliveryRecord];
    // The receiver answered 500 to the first and then 204 to the second; the success is written first.
    const failure = change(endpoint, false, { failingSince: new Date().toISOString() });
    await new Promise((r) => setTimeout(r, 5));
    await finishSuccess(succeeded, endpoint, lease);
    const finished = await ledger.finish({
      delivery: failed,
      update: update(false),
      endpoint,
      token: lease(failed).token,
      change: failure,
    });
    expect(finished.recorded).toBe(true);
    const after = await endpoints.get(endpoint.shop_id, endpoint.id);
    expect(after?.health).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
    expect(after?.failing_since ?? null).toBeNull();
    expect(after?.leases).toEqual({});
    expect(await deliveries.get(failed)).toMatchObject({ status: 'retrying', attempts: 1 });
  });

  it('a lease that expired and was taken again is left to its new holder; the attempt is still recorded', async () => {
    const { rows, endpoint, lease } = await setUp(1);
    const first = rows[0] as DeliveryRecord;
    const stolen = { taken: Date.now(), until: Date.now() + 60_000, token: 'someone-else', probe: false };
    const current = (await endpoints.get(endpoint.shop_id, endpoint.id)) as EndpointRecord;
    expect(
      await endpoints.admit(
        current,
        emptyAdmission({
          send: [{ deliveryId: first.id, lease: stolen }],
          expired: [first.id],
          health: current.health,
        }),
      ),
    ).toBe(true);
    const finished = await finishSuccess(first, endpoint, lease);
    expect(finished.recorded).toBe(true);
    expect((await endpoints.get(endpoint.shop_id, endpoint.id))?.leases[first.id]?.token).toBe('someone-else');
    expect(await deliveries.get(first)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});
