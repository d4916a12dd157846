/**
 * What DynamoDB Local's JVM spends, in CPU, on each table request of the delivery hot path,
 * beside the floor's own request (the row's conditional update) in the same run:
 *
 *   npm run bench:table-ops          (BENCH_TABLE_OPS_ROUNDS=3 rounds over 96 endpoints)
 *
 * On a 2-core machine the throughput benchmark is bounded by the CPU the consumer and the
 * emulator share, so this says what the consumer's per-batch requests (one BatchGetItem of
 * the batch's rows and endpoint, the admission on the endpoint, the transaction that ends the
 * batch: a row, the endpoint's slots and health, the stats counter) cost beside the ten row
 * updates a batch of ten makes either way. Each kind of request runs as one phase over every
 * endpoint (the real stores' requests, real items), and the JVM's CPU over the phase is
 * divided by the requests made: /proc counts in 10 ms ticks, so the phases are long.
 *
 * It also prints how busy the JVM was over each phase (CPU over wall time): DynamoDB Local does
 * about one core's worth of work however many requests are in flight, so a throughput run that
 * keeps it busy is bounded by its CPU per delivery. And it measures the one reshaping of the batch's requests that would save the
 * emulator work (the stats counters folded into the endpoint's write, so the batch's closing
 * transaction has two items, not three): the least we found the requests the contract
 * needs could cost it, and the throughput that would allow beside the floor.
 */
import './lib/quiet';
import { randomUUID } from 'node:crypto';
import { newDelivery } from '../shared/delivery/fan-out';
import { type DeliveryRecord } from '../shared/delivery/records';
import { newEvent } from '../shared/domain/events';
import { createShop } from '../shared/domain/shop';
import { createEndpoint, MAX_ENDPOINTS_PER_SHOP, type EndpointRecord } from '../shared/domain/webhook-endpoints';
import { newId } from '../shared/ids';
import { DynamoAttemptLedger } from '../shared/delivery/dynamo/attempt-ledger';
import { recordAttemptInput } from '../shared/delivery/dynamo/attempt-deliveries';
import { DynamoDeliveryStore } from '../shared/delivery/dynamo/deliveries';
import { updateIf } from '../shared/store/client';
import { keys } from '../shared/store/keys';
import { releaseInput } from '../shared/delivery/dynamo/endpoint-gate';
import { DynamoEndpointStore } from '../shared/store/webhook-endpoints';
import { admit, afterAttempt, MAX_IN_FLIGHT } from '../shared/delivery/circuit';
import type { AttemptUpdate } from '../shared/delivery/ports';
import { treeCpuMs } from './lib/cpu';
import { startPipelineEnv } from './lib/pipeline-env';
import { printTable, setting } from './lib/stats';

const ROUNDS = setting('BENCH_TABLE_OPS_ROUNDS', 3);
const ADMISSION = `UpdateItem: the admission (${MAX_IN_FLIGHT} leases)`;
const CEILING = 'UpdateItem: the same, 32 in flight';
const RESHAPED = 'reshaped: TransactWriteItems, row + endpoint with the stats counters folded in';
const ENDPOINTS = 96;
const BATCH = 10;
const LEASE_MS = 15_000;

const env = await startPipelineEnv();
try {
  const { db } = env.deps;
  const deliveries = new DynamoDeliveryStore(db);
  const endpoints = new DynamoEndpointStore(db);
  const ledger = new DynamoAttemptLedger(db);
  const now = new Date();
  const refs: { shopId: string; id: string }[] = [];
  for (let s = 0; refs.length < ENDPOINTS; s++) {
    const shop = await createShop(env.deps, { name: `Ops ${s}`, owner_email: 'ops@bench.test' });
    for (let i = 0; i < MAX_ENDPOINTS_PER_SHOP && refs.length < ENDPOINTS; i++) {
      const created = (await createEndpoint(env.deps, shop.id, {
        url: `http://127.0.0.1:9/${i}`,
        events: ['call.completed'],
        description: null,
      } as never)) as { id: string };
      refs.push({ shopId: shop.id, id: created.id });
    }
  }
  // Per round and endpoint, a batch's worth of fresh rows (the events are carried by messages, as the fan-out's are).
  const rowsOf = async () => {
    const all: DeliveryRecord[][] = [];
    for (const { shopId, id } of refs) {
      const rows = Array.from({ length: BATCH }, (_, i) =>
        newDelivery(newEvent(shopId, 'call.completed', { id: `call_${i}`, object: 'call' }, now), {
          id: newId('dlv', now.getTime()),
          endpointId: id,
          origin: 'fanout',
          now,
        }),
      );
      await deliveries.createAll(rows);
      all.push(rows);
    }
    return all;
  };
  const entry = { attempt: 1, at: now.toISOString(), status: 204, duration_ms: 3, error: null, response_snippet: null };
  const update: AttemptUpdate = {
    status: 'succeeded',
    attempts: 1,
    last_attempt_at: now.toISOString(),
    next_attempt_at: null,
    sweep_at: null,
    last_response_status: 204,
    last_error: null,
    entry,
  };

  const cpu: Record<string, { ms: number; requests: number; wallMs: number }> = {};
  const phase = async (name: string, work: (i: number) => Promise<unknown>, inFlight = 8) => {
    const before = treeCpuMs(env.dynamodb.pid) as number;
    const started = performance.now();
    // Eight at a time, as a consumer's batches overlap.
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < ENDPOINTS) await work(next++);
      }),
    );
    const used = (treeCpuMs(env.dynamodb.pid) as number) - before;
    const tally = (cpu[name] ??= { ms: 0, requests: 0, wallMs: 0 });
    tally.ms += used;
    tally.requests += ENDPOINTS;
    tally.wallMs += performance.now() - started;
  };

  for (let round = 0; round <= ROUNDS; round++) {
    const rows = await rowsOf();
    const read: EndpointRecord[] = [];
    const admitted: ReturnType<typeof admit>[] = [];
    if (round === 0) cpu.warm = { ms: 0, requests: 0, wallMs: 0 };
    const name = (n: string) => (round === 0 ? 'warm' : n);
    // Writing the rows leaves the JVM work it does over the next requests, whatever they are: not counted.
    await phase('settle', (i) =>
      db.doc.get({
        TableName: db.tableName,
        Key: keys.webhookEndpoint(refs[i]!.shopId, refs[i]!.id),
        ConsistentRead: true,
      }),
    );
    await phase(name("BatchGetItem: a batch's 10 rows and its endpoint"), async (i) => {
      const found = await deliveries.readForAttempts(
        (rows[i] as DeliveryRecord[]).map(
          (d) =>
            ({
              shop_id: d.shop_id,
              event_id: d.event_id,
              delivery_id: d.id,
              endpoint_id: d.endpoint_id,
              attempt: 1,
            }) as never,
        ),
      );
      read[i] = found.endpoint({ shop_id: refs[i]!.shopId, endpoint_id: refs[i]!.id } as never) as EndpointRecord;
    });
    await phase(name(ADMISSION), async (i) => {
      const a = admit(
        read[i] as EndpointRecord,
        (rows[i] as DeliveryRecord[]).slice(0, MAX_IN_FLIGHT).map((d) => d.id),
        { now: Date.now(), leaseMs: LEASE_MS, token: randomUUID },
      );
      admitted[i] = a;
      if (!(await endpoints.admit(read[i] as EndpointRecord, a)))
        throw new Error('admission lost a race it cannot have');
    });
    await phase(name("UpdateItem: the row records its attempt (the floor's request)"), (i) =>
      updateIf(db, recordAttemptInput((rows[i] as DeliveryRecord[])[1] as DeliveryRecord, update)),
    );
    // The same at 32 in flight: the JVM no busier than at 8 (about one core), so the CPU per request sets the rate.
    await phase(
      name(CEILING),
      (i) => updateIf(db, recordAttemptInput((rows[i] as DeliveryRecord[])[3] as DeliveryRecord, update)),
      32,
    );
    // The endpoints as they are now, read outside the phases (the batch's own read is measured above).
    const current = async () => (await Promise.all(refs.map((r) => endpoints.get(r.shopId, r.id)))) as EndpointRecord[];
    const afterAdmission = await current();
    await phase(name('TransactWriteItems: row + endpoint (slots, health) + stats, ending the batch'), async (i) => {
      const a = admitted[i] as ReturnType<typeof admit>;
      const [first, ...others] = a.send;
      const endpoint = afterAdmission[i] as EndpointRecord;
      const health = afterAttempt(
        endpoint.health,
        { succeeded: true, probe: false, retryAfterMs: null },
        Date.now(),
        1,
      );
      const carried = {
        attempts: Array.from({ length: BATCH - 1 }, () => ({ entry, status: 'succeeded' as const })),
        slots: others.map((s) => ({ key: s.deliveryId, token: s.lease.token })),
        deliveries: [],
      };
      const done = await ledger.finish({
        delivery: (rows[i] as DeliveryRecord[])[0] as DeliveryRecord,
        update,
        endpoint,
        token: first!.lease.token,
        leaseKey: first!.deliveryId,
        change: { succeeded: true, counted: true, opens: false, health },
        carried,
      });
      if (!done.recorded) throw new Error('the transaction found its row recorded already');
    });
    // Reshaped: the same batch's end, with the stats counted on the endpoint's own write (on fresh slots).
    const again: ReturnType<typeof admit>[] = [];
    const before = await current();
    await phase(name(ADMISSION), async (i) => {
      const endpoint = before[i] as EndpointRecord;
      const a = admit(
        endpoint,
        (rows[i] as DeliveryRecord[]).slice(MAX_IN_FLIGHT, 2 * MAX_IN_FLIGHT).map((d) => d.id),
        { now: Date.now(), leaseMs: LEASE_MS, token: randomUUID },
      );
      again[i] = a;
      if (!(await endpoints.admit(endpoint, a))) throw new Error('admission lost a race it cannot have');
    });
    const admitted2 = await current();
    await phase(name(RESHAPED), async (i) => {
      const [first, ...others] = (again[i] as ReturnType<typeof admit>).send;
      const endpoint = admitted2[i] as EndpointRecord;
      const health = afterAttempt(
        endpoint.health,
        { succeeded: true, probe: false, retryAfterMs: null },
        Date.now(),
        1,
      );
      const release = releaseInput(
        endpoint,
        first!.deliveryId,
        first!.lease.token,
        { succeeded: true, counted: true, opens: false, health },
        { slots: others.map((o) => ({ key: o.deliveryId, token: o.lease.token })) },
      );
      const folded = {
        ...release,
        UpdateExpression: `${release.UpdateExpression} ADD stats_attempts :sa, stats_succeeded :ss, stats_l9 :sl`,
        ExpressionAttributeValues: { ...release.ExpressionAttributeValues, ':sa': BATCH, ':ss': BATCH, ':sl': BATCH },
      };
      await db.doc.transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: db.tableName,
              ...recordAttemptInput((rows[i] as DeliveryRecord[])[2] as DeliveryRecord, update),
            },
          },
          { Update: { TableName: db.tableName, ...folded } },
        ],
      });
    });
    // For scale: a consistent read of the endpoint alone.
    await phase(name('GetItem: the endpoint (not on the hot path)'), (i) =>
      db.doc.get({
        TableName: db.tableName,
        Key: keys.webhookEndpoint(refs[i]!.shopId, refs[i]!.id),
        ConsistentRead: true,
      }),
    );
  }
  delete cpu.warm;
  delete cpu.settle;
  const txnName = 'TransactWriteItems: row + endpoint (slots, health) + stats, ending the batch';
  const txn = cpu[txnName] as { ms: number; requests: number };
  const floor = cpu["UpdateItem: the row records its attempt (the floor's request)"] as {
    ms: number;
    requests: number;
  };
  const per = (t: { ms: number; requests: number }) => t.ms / t.requests;
  printTable(
    `DynamoDB Local CPU per request, ms (${ROUNDS} rounds × ${ENDPOINTS} endpoints, 8 at a time; the JVM's /proc time over each phase)`,
    ['request', 'ms', 'vs the row update', 'JVM busy, cores'],
    Object.entries(cpu).map(([name, t]) => [
      name,
      per(t).toFixed(2),
      `${(per(t) / per(floor)).toFixed(2)}×`,
      (t.ms / t.wallMs).toFixed(2),
    ]),
  );
  const batchExtra =
    per(cpu["BatchGetItem: a batch's 10 rows and its endpoint"]!) + per(cpu[ADMISSION]!) + per(txn) - per(floor);
  console.log(
    `A batch of ${BATCH} makes ${BATCH} row writes either way (one inside the transaction); its other requests cost the emulator ${batchExtra.toFixed(2)} ms, ${(batchExtra / BATCH).toFixed(2)} ms per delivery beside the floor's ${per(floor).toFixed(2)}.`,
  );
  const least = batchExtra - per(txn) + per(cpu[RESHAPED]!);
  const bound = (extra: number) => per(floor) / (per(floor) + extra / BATCH);
  console.log(
    `With the stats counted on the endpoint's write (the least we found for the requests the contract needs: a consistent read of the rows, the slots taken and released, the stats) they would cost ${least.toFixed(2)} ms, ${(least / BATCH).toFixed(2)} ms per delivery. ` +
      `With the emulator the bottleneck, the consumer's rate beside the floor's is about the ratio of their emulator CPU per delivery: ${bound(batchExtra).toFixed(2)}× as the requests are, ${bound(least).toFixed(2)}× at the least.`,
  );
} finally {
  await env.close();
}
