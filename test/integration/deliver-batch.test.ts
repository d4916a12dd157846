import { makeHandler as makeDeliver } from '../../functions/deliver';
import { lambdaContext } from '../../lib/local/lambda-events';
import { CIRCUIT_OPEN } from '../../shared/delivery/attempt-plan';
import { deliverBatch } from '../../shared/delivery/deliver-batch';
import { carryingEvent, messageOf, type DeliveryMessage, type DeliveryRecord } from '../../shared/delivery/records';
import { fanOut, type FanOutDeps } from '../../shared/delivery/fan-out';
import type { AttemptDeps, AttemptEnd, AttemptLedger } from '../../shared/delivery/ports';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { sweep } from '../../shared/delivery/sweep';
import { updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { getEndpoint } from '../../shared/domain/endpoint-lifecycle';
import { AUTO_DISABLE_AFTER_MS } from '../../shared/delivery/policy';
import { keys, skPrefix } from '../../shared/store/keys';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { admit, carriedKey, CIRCUIT_THRESHOLD, MAX_IN_FLIGHT } from '../../shared/delivery/circuit';
import { RUNWAY_MS } from '../../shared/delivery/runway';
import type { SendResult } from '../../shared/delivery/sender';
import { DynamoAttemptLedger } from '../../shared/delivery/dynamo/attempt-ledger';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoDueIndex } from '../../shared/delivery/dynamo/due-index';
import { DynamoEndpointStatsStore } from '../../shared/delivery/dynamo/endpoint-stats';
import { DynamoEventStore } from '../../shared/store/events';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { useFreshTable } from '../helpers/table';
import { observeTable } from '../../shared/store/client';
import { emptyAdmission } from '../helpers/admission';
import { endpointWithPending } from '../helpers/pending-deliveries';

/** The consumer and sweeper on DynamoDB Local, with the receiver, queue and scheduler as fakes that record. */
describe('delivery consumer and sweeper (DynamoDB Local)', () => {
  let deps: Deps;
  let store: DynamoDeliveryStore;
  let endpoints: DynamoEndpointStore;
  let ledger: DynamoAttemptLedger;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
    endpoints = new DynamoEndpointStore(deps.db);
    ledger = new DynamoAttemptLedger(deps.db);
  });

  function harness(
    answer: () => Promise<Partial<SendResult>> | Partial<SendResult> = () => ({ status: 204 }),
    clock = () => new Date(),
  ) {
    const posts: string[] = [];
    const queued: DeliveryMessage[] = [];
    const scheduled: { message: DeliveryMessage; at: Date }[] = [];
    const attemptDeps: AttemptDeps = {
      deliveries: store,
      endpoints,
      ledger,
      order: new DynamoOrderStore(deps.db),
      queue: { send: async (m) => void queued.push(...m) },
      // As in AWS: past 15 minutes a wake-up costs a schedule of its own.
      scheduler: {
        schedule: async (message, at) => void scheduled.push({ message, at }),
        needsSchedule: (delayMs) => delayMs > 15 * 60_000,
      },
      sender: {
        post: async (_url, headers) => {
          posts.push(headers['webhook-id'] as string);
          return { status: null, error: null, retryAfterMs: null, durationMs: 1, snippet: null, ...(await answer()) };
        },
      },
      cipher: deps.cipher,
      checkTarget: async (url) => ({ ok: true, url: new URL(url) }),
      settings: { timeoutMs: 1000, deferMs: 250 },
      timeScale: 1,
      now: clock,
    };
    return { attemptDeps, posts, queued, scheduled };
  }

  /** `indexed`: rows off their fast path (put off, dead-lettered), in the due index a minute after creation. */
  const endpointWith = (count: number, opts: { indexed?: boolean } = {}) =>
    endpointWithPending(deps, count, {
      shape: (row) =>
        opts.indexed ? { ...row, sweep_at: new Date(Date.parse(row.created_at) + 60_000).toISOString() } : row,
    });
  const row = (d: DeliveryRecord) => store.get(d);
  const verdicts = (results: PromiseSettledResult<string>[]) =>
    results.map((r) => (r.status === 'fulfilled' ? r.value : `error: ${String(r.reason)}`));
  /** What the consumer's batch made of each message. */
  const sendBatch = async (h: ReturnType<typeof harness>, messages: DeliveryMessage[]) =>
    verdicts(await deliverBatch(h.attemptDeps, messages));

  /**
   * A batch of the first MAX_IN_FLIGHT rows, once each of its requests is in flight (every slot of
   * the endpoint taken), and the messages of the rows after them.
   */
  async function slotsTaken(h: ReturnType<typeof harness>, rows: DeliveryRecord[]) {
    const holders = deliverBatch(
      h.attemptDeps,
      rows.slice(0, MAX_IN_FLIGHT).map((r) => messageOf(r)),
    );
    while (h.posts.length < MAX_IN_FLIGHT) await new Promise((r) => setTimeout(r, 5));
    return { holders, late: rows.slice(MAX_IN_FLIGHT).map((r) => messageOf(r)) };
  }

  it('reads every row, event and endpoint of a batch in one request', async () => {
    const { rows } = await endpointWith(3);
    const sent: string[] = [];
    const unwatch = observeTable(deps.db, (operation) => sent.push(`${operation}Command`));
    try {
      const inputs = await store.readForAttempts([
        ...rows.map((r) => messageOf(r)),
        { ...messageOf(rows[0] as DeliveryRecord), delivery_id: 'dlv_01jd0000000000000000000000' },
      ]);
      expect(sent).toEqual(['BatchGetItemCommand']);
      expect(inputs.delivery(messageOf(rows[1] as DeliveryRecord))).toMatchObject({
        id: rows[1]?.id,
        status: 'pending',
      });
      expect(inputs.endpoint(messageOf(rows[2] as DeliveryRecord))).toMatchObject({
        id: rows[2]?.endpoint_id,
        health: { circuit: 'closed' },
      });
    } finally {
      unwatch();
    }
  });

  it(
    'reads only row and endpoint for a message that carries ' +
      "its event (the fan-out's), and sends the event it carries",
    async () => {
      const { rows } = await endpointWith(2);
      const [carrier, plain] = rows as [DeliveryRecord, DeliveryRecord];
      const stored = (await new DynamoEventStore(deps.db).get(carrier.shop_id, carrier.event_id)) as EventRecord;
      // Marked, to tell the carried copy from the stored one (a real message carries the event as written).
      const carried = { ...stored, data: { ...stored.data, carried: true } };
      const h = harness();
      const bodies: Record<string, unknown>[] = [];
      h.attemptDeps.sender = {
        post: async (_url, _headers, body) => (
          bodies.push(JSON.parse(body) as Record<string, unknown>),
          { status: 204, error: null, retryAfterMs: null, durationMs: 1, snippet: null }
        ),
      };
      const read: string[] = [];
      const unwatch = observeTable(deps.db, (operation, input) => {
        if (operation === 'BatchGetItem') read.push(...(JSON.stringify(input).match(/(WD|EVT|WE)#[^"]*/g) ?? []));
      });
      try {
        expect(await sendBatch(h, [carryingEvent(messageOf(carrier), carried), messageOf(plain)])).toEqual([
          'delivered',
          'delivered',
        ]);
      } finally {
        unwatch();
      }
      const eventKeys = read.filter((k) => k.startsWith('EVT'));
      expect(eventKeys).toEqual([keys.event(plain.shop_id, plain.event_id).sk]);
      expect(read.filter((k) => k.startsWith(skPrefix.endpointDeliveries(plain.endpoint_id)))).toHaveLength(2);
      expect(bodies.find((b) => b.id === carrier.event_id)?.data).toMatchObject({ carried: true });
      expect(bodies.find((b) => b.id === plain.event_id)?.data).not.toHaveProperty('carried');
    },
  );

  it(
    `sends at most ${MAX_IN_FLIGHT} to one healthy endpoint at once; ` +
      'a freed slot passes to the next delivery of the batch',
    async () => {
      const { rows, endpoint, shop } = await endpointWith(10);
      let inFlight = 0;
      let most = 0;
      const h = harness(async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return { status: 204 };
      });
      expect(
        await sendBatch(
          h,
          rows.map((r) => messageOf(r)),
        ),
      ).toEqual(Array(10).fill('delivered'));
      expect([h.posts.length, most]).toEqual([10, MAX_IN_FLIGHT]);
      expect(h.scheduled).toEqual([]); // no trip through the queue
      const after = await endpoints.get(shop.id, endpoint.id);
      expect(after?.leases).toEqual({});
      expect(after?.health).toMatchObject({
        circuit: 'closed',
        consecutive_failures: 0,
        last_success_at: expect.any(String),
      });
    },
  );

  describe("the invocation's end (Lambda's timeout)", () => {
    // The harness's request timeout is 1 s; a request's record needs 2 s after it.
    const NEEDS_MS = 1000 + 2000;

    it(
      'starts no request that could not end, and be recorded, before it: ' + 'the delivery goes back, uncounted',
      async () => {
        const { rows, shop, endpoint } = await endpointWith(1);
        const row = rows[0] as DeliveryRecord;
        const h = harness();
        const verdict = verdicts(await deliverBatch(h.attemptDeps, [messageOf(row)], Date.now() + NEEDS_MS - 200));
        expect(verdict).toEqual(['deferred']);
        expect(h.posts).toEqual([]);
        expect(await store.get(row)).toMatchObject({ status: 'pending', attempts: 0 });
        const after = await endpoints.get(shop.id, endpoint.id);
        expect(after?.leases).toEqual({});
        expect(after?.health).toMatchObject({ consecutive_failures: 0 });
        expect(h.scheduled.map((s) => [s.message.delivery_id, s.message.deferrals])).toEqual([[row.id, 1]]);
        // An invocation with the time sends it.
        expect(await sendBatch(h, [h.scheduled[0]?.message as DeliveryMessage])).toEqual(['delivered']);
        expect(h.posts).toHaveLength(1);
      },
    );

    it("is the consumer's Lambda context's: its time left when the handler starts", async () => {
      const { rows } = await endpointWith(1);
      const row = rows[0] as DeliveryRecord;
      const h = harness();
      const handler = makeDeliver(() => h.attemptDeps);
      const event = { Records: [{ messageId: 'm1', body: JSON.stringify(messageOf(row)) }] } as never;
      expect(await handler(event, lambdaContext('deliver', 'short', NEEDS_MS - 200))).toEqual({
        batchItemFailures: [],
      });
      expect([h.posts.length, h.scheduled.length]).toEqual([0, 1]);
      expect(await handler(event, lambdaContext('deliver', 'long', NEEDS_MS + 2000))).toEqual({
        batchItemFailures: [],
      });
      expect([h.posts.length, h.scheduled.length]).toEqual([1, 1]);
    });

    it('ends a run whose next request would outlast it: the deliveries waiting for its slots go back', async () => {
      const { rows, shop, endpoint } = await endpointWith(MAX_IN_FLIGHT + 2);
      const h = harness(async () => {
        await new Promise((r) => setTimeout(r, 400));
        return { status: 204 };
      });
      // The first requests start at once; by their answers, 400 ms on, none fits any more.
      const results = verdicts(
        await deliverBatch(
          h.attemptDeps,
          rows.map((r) => messageOf(r)),
          Date.now() + NEEDS_MS + 300,
        ),
      );
      expect(results).toEqual([...Array(MAX_IN_FLIGHT).fill('delivered'), 'deferred', 'deferred']);
      expect(h.posts).toHaveLength(MAX_IN_FLIGHT);
      expect(h.scheduled.map((s) => s.message.delivery_id).sort()).toEqual(
        rows
          .slice(MAX_IN_FLIGHT)
          .map((r) => r.id)
          .sort(),
      );
      expect((await endpoints.get(shop.id, endpoint.id))?.leases).toEqual({});
    });
  });

  it(
    'deliveries that went back on the queue for want of a slot are ' +
      'pulled from the table by the batch whose success frees one',
    async () => {
      const { rows, shop, endpoint } = await endpointWith(12);
      let inFlight = 0;
      let most = 0;
      const h = harness(async () => {
        most = Math.max(most, ++inFlight);
        // The first ones answer slowly enough for the second batch to find every slot taken.
        await new Promise((r) => setTimeout(r, h.posts.length <= MAX_IN_FLIGHT ? 400 : 20));
        inFlight--;
        return { status: 204 };
      });
      const { holders, late } = await slotsTaken(h, rows);
      // The endpoint is full: the late batch sends nothing, puts its messages back and marks the endpoint.
      expect(await sendBatch(h, late)).toEqual(Array(late.length).fill('deferred'));
      expect(h.scheduled.map((s) => s.message.delivery_id).sort()).toEqual(late.map((m) => m.delivery_id).sort());
      expect(await endpoints.get(shop.id, endpoint.id)).toHaveProperty('backlog_at');
      // The holders' batch delivers its own and then the waiting ones, at the endpoint's limit.
      expect(verdicts(await holders)).toEqual(Array(MAX_IN_FLIGHT).fill('delivered'));
      expect(h.posts.sort()).toEqual(rows.map((r) => r.event_id).sort());
      expect(most).toBe(MAX_IN_FLIGHT);
      for (const r of rows) expect(await row(r)).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(await endpoints.get(shop.id, endpoint.id)).not.toHaveProperty('backlog_at');
      // The messages that went back come round again and send nothing.
      expect(
        await sendBatch(
          h,
          h.scheduled.map((s) => s.message),
        ),
      ).toEqual(Array(late.length).fill('duplicate'));
      expect(h.posts).toHaveLength(rows.length);
    },
  );

  it(
    `a success after its batch's ${RUNWAY_MS / 1000} s runway ` +
      'hands the deliveries waiting for a slot back to the queue, due now, instead of leaving them to their deferral',
    async () => {
      const { rows, shop, endpoint } = await endpointWith(12);
      // The holders answer after the runway: their batch ends past it and must not pull.
      const h = harness(async () => {
        await new Promise((r) => setTimeout(r, h.posts.length <= MAX_IN_FLIGHT ? RUNWAY_MS + 300 : 5));
        return { status: 204 };
      });
      const { holders, late } = await slotsTaken(h, rows);
      expect(await sendBatch(h, late)).toEqual(Array(late.length).fill('deferred'));
      expect(await endpoints.get(shop.id, endpoint.id)).toHaveProperty('backlog_at');
      expect(verdicts(await holders)).toEqual(Array(MAX_IN_FLIGHT).fill('delivered'));
      // Not pulled (only the holders were sent), but queued again at once, and the mark taken.
      expect(h.posts).toHaveLength(MAX_IN_FLIGHT);
      expect(h.queued.map((m) => m.delivery_id).sort()).toEqual(late.map((m) => m.delivery_id).sort());
      expect(await endpoints.get(shop.id, endpoint.id)).not.toHaveProperty('backlog_at');
      expect(await sendBatch(h, h.queued)).toEqual(Array(late.length).fill('delivered'));
      for (const r of rows) expect(await row(r)).toMatchObject({ status: 'succeeded', attempts: 1 });
    },
    20_000,
  );

  it(
    'costs 1.2 table requests per delivery on the hot path: one read, ' +
      'one admission, one write per attempt, one transaction per endpoint',
    async () => {
      const { shop, endpoint, rows } = await endpointWith(10);
      const h = harness();
      const sent: string[] = [];
      const unwatch = observeTable(deps.db, (operation) => sent.push(`${operation}Command`));
      try {
        expect(
          await sendBatch(
            h,
            rows.map((r) => messageOf(r)),
          ),
        ).toEqual(Array(10).fill('delivered'));
      } finally {
        unwatch();
      }
      const count = (name: string) => sent.filter((c) => c === name).length;
      // The admission and 9 successes recorded on their rows alone; the last run's end writes its row, every slot's
      // release and the stats.
      expect({
        reads: count('BatchGetItemCommand'),
        updates: count('UpdateItemCommand'),
        transactions: count('TransactWriteItemsCommand'),
      }).toEqual({ reads: 1, updates: 10, transactions: 1 });
      expect(sent).toHaveLength(12);
      for (const r of rows) expect(await row(r)).toMatchObject({ status: 'succeeded', attempts: 1 });
      const after = await endpoints.get(shop.id, endpoint.id);
      expect(after?.leases).toEqual({});
      expect(after?.health.last_success_at).not.toBeNull();
      const buckets = await new DynamoEndpointStatsStore(deps.db).window(shop.id, endpoint.id, new Date());
      expect(buckets.reduce((n, b) => n + b.succeeded, 0)).toBe(10);
    },
  );

  it('after an unanswered attempt, one at a time: the rest go back on the queue with no attempt used', async () => {
    const { rows } = await endpointWith(4);
    const h = harness(() => ({ status: null, error: 'timeout after 1000 ms' }));
    expect(
      await sendBatch(
        h,
        rows.slice(0, 1).map((r) => messageOf(r)),
      ),
    ).toEqual(['retry_scheduled']);
    h.scheduled.length = 0;
    expect(
      await sendBatch(
        h,
        rows.slice(1).map((r) => messageOf(r)),
      ),
    ).toEqual(['retry_scheduled', 'deferred', 'deferred']);
    expect(h.posts).toHaveLength(2);
    const deferred = h.scheduled.filter((s) => s.message.deferrals === 1).map((s) => s.message.delivery_id);
    // Each deferral writes its row's index entry first, so the queue sends finish in any order.
    expect([...deferred].sort()).toEqual([rows[2]?.id, rows[3]?.id].sort());
    expect(await row(rows[3] as DeliveryRecord)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it(
    'behind requests that look stuck, deferred deliveries wait until the first ' +
      'lease ends, and the endpoint is marked so a success pulls them sooner',
    async () => {
      const { rows, shop, endpoint } = await endpointWith(MAX_IN_FLIGHT + 2);
      const h = harness();
      // Every slot held by requests taken 2 s ago (the lease is the 1 s timeout + 5 s), nothing succeeded since.
      const leaseMs = h.attemptDeps.settings.timeoutMs + 5_000;
      const until = Date.now() + leaseMs - 2_000;
      const current = await endpoints.get(shop.id, endpoint.id);
      const held = rows
        .slice(0, MAX_IN_FLIGHT)
        .map((r) => ({ deliveryId: r.id, lease: { taken: until - leaseMs, until, token: `t_${r.id}`, probe: false } }));
      expect(await endpoints.admit(current!, emptyAdmission({ send: held, health: current!.health }))).toBe(true);
      const late = rows.slice(MAX_IN_FLIGHT).map((r) => messageOf(r));
      expect(await sendBatch(h, late)).toEqual(['deferred', 'deferred']);
      expect(h.posts).toEqual([]);
      expect(h.scheduled.map((s) => s.at.getTime())).toEqual([until, until]);
      expect(await endpoints.get(shop.id, endpoint.id)).toHaveProperty('backlog_at');
    },
  );

  it(
    'when the table fails mid-attempt, that message fails ' + "alone and the batch's waiting ones go back on the queue",
    async () => {
      const { rows } = await endpointWith(6);
      const h = harness();
      const failing: AttemptLedger = {
        finish: async (end: AttemptEnd) => {
          if (end.delivery.id === rows[0]?.id) throw new Error('table unavailable');
          return ledger.finish(end);
        },
        recordInRun: async (delivery, update) => {
          if (delivery.id === rows[0]?.id) throw new Error('table unavailable');
          return ledger.recordInRun(delivery, update);
        },
        releaseCarried: (endpoint, carried) => ledger.releaseCarried(endpoint, carried),
      };
      const results = verdicts(
        await deliverBatch(
          { ...h.attemptDeps, ledger: failing },
          rows.map((r) => messageOf(r)),
        ),
      );
      expect(results[0]).toBe('error: Error: table unavailable');
      expect(results.slice(1).every((v) => v === 'delivered' || v === 'deferred')).toBe(true);
      expect(results.filter((v) => v === 'deferred').length).toBeGreaterThan(0);
    },
  );

  it('two consumers given the same message at once send it once', async () => {
    const { rows } = await endpointWith(1);
    const h = harness(() => new Promise((r) => setTimeout(() => r({ status: 204 }), 100)));
    const message = messageOf(rows[0] as DeliveryRecord);
    const [a, b] = await Promise.all([deliverBatch(h.attemptDeps, [message]), deliverBatch(h.attemptDeps, [message])]);
    expect(h.posts).toHaveLength(1);
    // The other finds it in flight, or, when its read comes after the record on a busy machine, already done.
    const [first, other] = [...verdicts(a as never), ...verdicts(b as never)].sort();
    expect(first).toBe('delivered');
    expect(['duplicate', 'in_flight']).toContain(other);
  });

  it(
    "a delivery one batch's runs carry, woken again in another batch " +
      'meanwhile, is sent once: the other sends it back to the queue',
    async () => {
      const { rows, endpoint, shop } = await endpointWith(MAX_IN_FLIGHT + 2);
      const h = harness(() => new Promise((r) => setTimeout(() => r({ status: 204 }), 60)));
      const carried = rows[rows.length - 1] as DeliveryRecord;
      // Another consumer holds two slots when batch A is admitted: A gets the other two and carries the rest for them.
      const read = (await endpoints.get(shop.id, endpoint.id)) as NonNullable<
        Awaited<ReturnType<typeof endpoints.get>>
      >;
      const others = ['dlv_01jd0000000000000000000001', 'dlv_01jd0000000000000000000002'].map((id) => ({
        deliveryId: id,
        lease: { taken: Date.now(), until: Date.now() + 60_000, token: `t-${id}`, probe: false },
      }));
      expect(await endpoints.admit(read, emptyAdmission({ send: others, health: read.health }))).toBe(true);
      const a = deliverBatch(
        h.attemptDeps,
        rows.map((r) => messageOf(r)),
      );
      while (h.posts.length === 0) await new Promise((r) => setTimeout(r, 5));
      const state = await deps.db.doc.get({
        TableName: deps.db.tableName,
        Key: keys.endpointState(shop.id, endpoint.id),
        ConsistentRead: true,
      });
      expect(
        Object.keys(state.Item ?? {})
          .filter((k) => k.startsWith('c_'))
          .sort(),
      ).toEqual(
        rows
          .slice(2)
          .map((r) => carriedKey(r.id))
          .sort(),
      );
      // The other consumer's requests end: two slots are free while A's runs still carry the last row.
      await endpoints.dropLeases(
        read,
        others.map((o) => ({ key: o.deliveryId, token: o.lease.token })),
      );
      // Another wake-up of that row (a duplicate message, a sweep, a pull) in batch B.
      expect(await sendBatch(h, [messageOf(carried)])).toEqual(['deferred']);
      expect(verdicts(await a)).toEqual(Array(rows.length).fill('delivered'));
      expect(h.posts.filter((id) => id === carried.event_id)).toHaveLength(1);
      expect(h.scheduled.map((s) => s.message.delivery_id)).toEqual([carried.id]);
      // The last run's write ended what the batch carried.
      const after = await deps.db.doc.get({
        TableName: deps.db.tableName,
        Key: keys.endpointState(shop.id, endpoint.id),
        ConsistentRead: true,
      });
      expect(Object.keys(after.Item ?? {}).filter((k) => k.startsWith('c_'))).toEqual([]);
      expect(after.Item?.leases).toEqual({});
    },
  );

  it(
    'an admission made on a read from before another batch carried ' +
      'a delivery does not send it, nor carry one another batch holds',
    async () => {
      const { rows, endpoint, shop } = await endpointWith(3);
      const [x, y, z] = rows as [DeliveryRecord, DeliveryRecord, DeliveryRecord];
      const read = (await endpoints.get(shop.id, endpoint.id)) as NonNullable<
        Awaited<ReturnType<typeof endpoints.get>>
      >;
      const slot = (id: string) => ({
        deliveryId: id,
        lease: { taken: Date.now(), until: Date.now() + 60_000, token: `t-${id}`, probe: false },
      });
      const none = emptyAdmission({ health: read.health });
      // A: sends y, carries x.
      expect(
        await endpoints.admit(read, { ...none, send: [slot(y.id)], carry: [x.id], carryUntil: Date.now() + 60_000 }),
      ).toBe(true);
      // B read the endpoint before A wrote: it would send x, on the count of leases (a healthy endpoint's way).
      expect(await endpoints.admit(read, { ...none, send: [slot(x.id)], carry: [], carryUntil: 0 })).toBe(false);
      // C read before too: it would send z and carry y, which A holds a lease for.
      expect(
        await endpoints.admit(read, { ...none, send: [slot(z.id)], carry: [y.id], carryUntil: Date.now() + 60_000 }),
      ).toBe(false);
      // D read before too: it would send z and carry x, which A carries.
      expect(
        await endpoints.admit(read, { ...none, send: [slot(z.id)], carry: [x.id], carryUntil: Date.now() + 60_000 }),
      ).toBe(false);
      const now = (await endpoints.get(shop.id, endpoint.id)) as NonNullable<Awaited<ReturnType<typeof endpoints.get>>>;
      expect(Object.keys(now.leases)).toEqual([y.id]);
      expect(Object.keys(now.carried ?? {})).toEqual([carriedKey(x.id)]);
    },
  );

  it(
    'what a consumer that died carried expires: the next admission carries it ' +
      "anew in the same write, and only the carrier's own entry is ever removed",
    async () => {
      const { rows, endpoint, shop } = await endpointWith(2);
      const [x, y] = rows as [DeliveryRecord, DeliveryRecord];
      const key = keys.endpointState(shop.id, endpoint.id);
      // Left by a consumer that died mid-batch, past its time.
      await deps.db.doc.update({
        TableName: deps.db.tableName,
        Key: key,
        UpdateExpression: 'SET #c = :past',
        ExpressionAttributeNames: { '#c': carriedKey(x.id) },
        ExpressionAttributeValues: { ':past': Date.now() - 1000 },
      });
      const read = (await endpoints.get(shop.id, endpoint.id)) as NonNullable<
        Awaited<ReturnType<typeof endpoints.get>>
      >;
      const admission = admit(read, [y.id, x.id], { now: Date.now(), leaseMs: 60_000, token: () => 'tok' });
      // A batch over the limit: y goes out, x waits in its runway (carried).
      const until = Date.now() + 60_000;
      expect(admission.expiredCarried).toEqual([carriedKey(x.id)]);
      expect(
        await endpoints.admit(read, {
          ...admission,
          send: admission.send.filter((s) => s.deliveryId === y.id),
          carry: [x.id],
          carryUntil: until,
        }),
      ).toBe(true);
      const after =
        (await deps.db.doc.get({ TableName: deps.db.tableName, Key: key, ConsistentRead: true })).Item ?? {};
      expect(after[carriedKey(x.id)]).toBe(until);
      // A late release of the dead consumer's (its time, not this one) leaves the new entry; the carrier's own removes
      // it.
      await endpoints.dropLeases(read, [], [x.id], Date.now() - 1000);
      expect(
        (await deps.db.doc.get({ TableName: deps.db.tableName, Key: key, ConsistentRead: true })).Item?.[
          carriedKey(x.id)
        ],
      ).toBe(until);
      await endpoints.dropLeases(read, [], [x.id], until);
      expect(
        (await deps.db.doc.get({ TableName: deps.db.tableName, Key: key, ConsistentRead: true })).Item?.[
          carriedKey(x.id)
        ],
      ).toBeUndefined();
    },
  );

  it(
    'opens the circuit, records due deliveries as circuit_open without ' +
      'a schedule, probes, and releases the waiting ones on success',
    async () => {
      let clock = Date.now();
      let status = 503;
      const { rows, shop, endpoint } = await endpointWith(CIRCUIT_THRESHOLD + 2);
      const h = harness(
        () => ({ status }),
        () => new Date(clock),
      );
      // One at a time after the first failure: five batches of one make five failures.
      for (const r of rows.slice(0, CIRCUIT_THRESHOLD))
        expect(await sendBatch(h, [messageOf(r)])).toEqual(['retry_scheduled']);
      expect((await endpoints.get(shop.id, endpoint.id))?.health).toMatchObject({
        circuit: 'open',
        consecutive_failures: CIRCUIT_THRESHOLD,
      });

      // A delivery on its 4th attempt (due 30 min after the 3rd): with the circuit open it gets no schedule.
      const held = rows[CIRCUIT_THRESHOLD] as DeliveryRecord;
      const late = await store
        .get(held)
        .then((d) => ({ ...(d as DeliveryRecord), status: 'retrying' as const, attempts: 3 }));
      await deps.db.doc.update({
        TableName: deps.db.tableName,
        Key: keys.delivery(held.shop_id, held.endpoint_id, held.id),
        UpdateExpression: 'SET attempts = :three, #s = :retrying',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':three': 3, ':retrying': 'retrying' },
      });
      const postsBefore = h.posts.length;
      const scheduledBefore = h.scheduled.length;
      expect(await sendBatch(h, [messageOf(late)])).toEqual(['circuit_open']);
      expect(h.posts).toHaveLength(postsBefore);
      const recorded = await row(held);
      expect(recorded).toMatchObject({
        status: 'retrying',
        attempts: 4,
        last_response_status: null,
        last_error: CIRCUIT_OPEN,
      });
      expect(recorded?.history.at(-1)).toMatchObject({ attempt: 4, status: null, error: CIRCUIT_OPEN });
      expect(h.scheduled).toHaveLength(scheduledBefore); // no per-delivery schedule while open…
      expect(recorded?.sweep_at).toBe(recorded?.next_attempt_at); // …the sweeper wakes it at its time

      // Past the probe time a real due delivery goes out as the probe; its success closes the circuit.
      clock += 16_000;
      status = 204;
      h.queued.length = 0;
      expect(await sendBatch(h, [messageOf(rows[CIRCUIT_THRESHOLD + 1] as DeliveryRecord)])).toEqual(['delivered']);
      expect((await endpoints.get(shop.id, endpoint.id))?.health).toMatchObject({
        circuit: 'closed',
        consecutive_failures: 0,
        next_probe_at: null,
      });
      // Every delivery still retrying is put back on the queue now, not at its next offset.
      expect(h.queued.map((m) => m.delivery_id).sort()).toEqual(
        [...rows.slice(0, CIRCUIT_THRESHOLD).map((r) => r.id), held.id].sort(),
      );
      expect(h.queued.find((m) => m.delivery_id === held.id)?.attempt).toBe(5);
    },
  );

  it(
    'an endpoint disabled with its circuit open shows that circuit and no ' +
      'probe to come: by the 3-day rule, in its disabled event, and by hand',
    async () => {
      let clock = Date.now();
      const h = harness(
        () => ({ status: 503 }),
        () => new Date(clock),
      );
      /** An endpoint whose circuit the first CIRCUIT_THRESHOLD of its rows' failures opened. */
      const failing = async (extra: number) => {
        const made = await endpointWith(CIRCUIT_THRESHOLD + extra);
        for (const r of made.rows.slice(0, CIRCUIT_THRESHOLD))
          expect(await sendBatch(h, [messageOf(r)])).toEqual(['retry_scheduled']);
        expect((await getEndpoint({ endpoints }, made.shop.id, made.endpoint.id)).health).toMatchObject({
          circuit: 'open',
          next_probe_at: expect.any(String),
        });
        return made;
      };

      // Three days on, its probe fails too: the engine disables it, past its probe time.
      const auto = await failing(1);
      clock += AUTO_DISABLE_AFTER_MS + 60_000;
      await deliverBatch(h.attemptDeps, [messageOf(auto.rows[CIRCUIT_THRESHOLD] as DeliveryRecord)]);
      const disabled = await getEndpoint({ endpoints }, auto.shop.id, auto.endpoint.id);
      expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'failing' });
      expect(disabled.health).toEqual({
        circuit: 'open',
        consecutive_failures: CIRCUIT_THRESHOLD + 1,
        last_success_at: null,
        last_failure_at: new Date(clock).toISOString(),
        next_probe_at: null,
      });
      const events = new DynamoEventStore(deps.db);
      const [event] = (await events.list(auto.shop.id, { limit: 5 }, 'webhook_endpoint.disabled')).items;
      expect(event?.data).toMatchObject({ id: auto.endpoint.id, enabled: false, health: { next_probe_at: null } });

      // By hand: PATCH enabled:false answers, and later reads show, no probe time; enabling again resets health.
      const manual = await failing(0);
      const guard = { ...deps, checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }) };
      const patched = await updateEndpoint(guard, manual.shop.id, manual.endpoint.id, { enabled: false });
      expect(patched.health).toMatchObject({
        circuit: 'open',
        consecutive_failures: CIRCUIT_THRESHOLD,
        next_probe_at: null,
      });
      expect((await getEndpoint({ endpoints }, manual.shop.id, manual.endpoint.id)).health.next_probe_at).toBeNull();
      const enabled = await updateEndpoint(guard, manual.shop.id, manual.endpoint.id, { enabled: true });
      expect(enabled.health).toEqual({
        circuit: 'closed',
        consecutive_failures: 0,
        last_success_at: null,
        last_failure_at: null,
        next_probe_at: null,
      });
    },
  );

  it(
    'a 410 disables the endpoint at the time of the answer: ' + 'its event is stamped then, not when the attempt began',
    async () => {
      let clock = Date.now();
      const began = clock;
      // The receiver takes 8 s to answer Gone.
      const h = harness(
        () => ((clock += 8_000), { status: 410 }),
        () => new Date(clock),
      );
      const { rows, shop, endpoint } = await endpointWith(1);
      expect(await sendBatch(h, [messageOf(rows[0] as DeliveryRecord)])).toEqual(['failed']);
      const [event] = (await new DynamoEventStore(deps.db).list(shop.id, { limit: 5 }, 'webhook_endpoint.disabled'))
        .items;
      expect(event?.timestamp).toBe(new Date(clock).toISOString());
      expect(event?.timestamp).not.toBe(new Date(began).toISOString());
      expect(await getEndpoint({ endpoints }, shop.id, endpoint.id)).toMatchObject({
        enabled: false,
        disabled_reason: 'gone',
        updated_at: new Date(clock).toISOString(),
      });
    },
  );

  it(
    "fan-out gives an open endpoint's new delivery its first attempt as " +
      'circuit_open and a wake-up; that second attempt goes out as the probe',
    async () => {
      let status = 503;
      const { rows, shop } = await endpointWith(CIRCUIT_THRESHOLD);
      // After the endpoint's creation: it receives only events created after it.
      let clock = Date.now() + 1;
      const h = harness(
        () => ({ status }),
        () => new Date(clock),
      );
      for (const r of rows) await deliverBatch(h.attemptDeps, [messageOf(r)]);
      const event = newEvent(shop.id, 'call.completed', { id: 'call_after_open' }, new Date(clock));
      await new DynamoEventStore(deps.db).put(event);
      const fanOutDeps: FanOutDeps = {
        endpoints,
        deliveries: store,
        order: new DynamoOrderStore(deps.db),
        queue: h.attemptDeps.queue,
        scheduler: h.attemptDeps.scheduler,
        timeScale: 1,
        now: () => new Date(clock),
      };
      h.queued.length = 0;
      h.scheduled.length = 0;
      const postsBefore = h.posts.length;

      expect(await fanOut(fanOutDeps, event)).toBe(0);
      const [held] = await store.listForEvent(shop.id, event.id);
      expect(held).toMatchObject({
        status: 'retrying',
        attempts: 1,
        last_response_status: null,
        last_error: CIRCUIT_OPEN,
        next_attempt_at: new Date(clock + 60_000).toISOString(),
      });
      expect(held?.history).toEqual([
        {
          attempt: 1,
          at: new Date(clock).toISOString(),
          status: null,
          duration_ms: 0,
          error: CIRCUIT_OPEN,
          response_snippet: null,
        },
      ]);
      expect(h.queued).toEqual([]);
      expect(h.scheduled).toEqual([{ message: messageOf(held as DeliveryRecord), at: new Date(clock + 60_000) }]);
      // In the due index at its wake-up plus the grace, should that message be lost.
      const due = new DynamoDueIndex(deps.db);
      expect((await due.overdue(new Date(clock + 60_000), 1000)).map((e) => e.id)).not.toContain(held?.id);
      expect((await due.overdue(new Date(clock + 60_000 + 61_000), 1000)).map((e) => e.id)).toContain(held?.id);

      // A minute later the probe is due: the woken attempt 2 is it, and its success closes the circuit.
      clock += 60_000;
      status = 204;
      expect(await sendBatch(h, [h.scheduled[0]?.message as DeliveryMessage])).toEqual(['delivered']);
      expect(h.posts.length).toBe(postsBefore + 1);
      expect(await row(held as DeliveryRecord)).toMatchObject({ status: 'succeeded', attempts: 2 });
    },
  );

  it('the sweeper sends an overdue delivery nobody woke, once, and leaves one in flight alone', async () => {
    const { rows, shop, endpoint } = await endpointWith(2, { indexed: true });
    const [lost, busy] = rows as [DeliveryRecord, DeliveryRecord];
    const queued: DeliveryMessage[] = [];
    const later = () => new Date(Date.now() + 2 * 60_000); // past every row's sweep time (1 min grace)
    const sweepDeps = {
      due: new DynamoDueIndex(deps.db),
      order: new DynamoOrderStore(deps.db),
      endpoints,
      queue: { send: async (m: DeliveryMessage[]) => void queued.push(...m) },
      timeScale: 1,
      now: later,
    };
    // The second row is being attempted right now: its endpoint holds a live lease on it.
    const current = await endpoints.get(shop.id, endpoint.id);
    await endpoints.admit(
      current!,
      emptyAdmission({
        send: [
          {
            deliveryId: busy.id,
            lease: { taken: Date.now(), until: later().getTime() + 60_000, token: 't', probe: false },
          },
        ],
        health: current!.health,
      }),
    );

    const [first, second] = await Promise.all([sweep(sweepDeps), sweep(sweepDeps)]);
    const mine = queued.filter((m) => m.delivery_id === lost.id || m.delivery_id === busy.id);
    expect(mine).toEqual([messageOf(lost)]);
    expect((first?.inFlight ?? 0) + (second?.inFlight ?? 0)).toBeGreaterThanOrEqual(1);
    // Postponed: the next sweep a moment later does not send it again.
    queued.length = 0;
    await sweep(sweepDeps);
    expect(queued.filter((m) => m.delivery_id === lost.id)).toEqual([]);

    // The swept message and a late original both arrive while it is in flight: one attempt, one POST.
    const h = harness(() => new Promise((r) => setTimeout(() => r({ status: 204 }), 100)));
    await Promise.all([deliverBatch(h.attemptDeps, [messageOf(lost)]), deliverBatch(h.attemptDeps, [messageOf(lost)])]);
    expect(h.posts).toEqual([lost.event_id]);
    expect(await row(lost)).toMatchObject({ status: 'succeeded', attempts: 1, sweep_at: null });
  });

  /** The row as stored, index attributes included. */
  const stored = async (d: DeliveryRecord) =>
    (
      await deps.db.doc.get({
        TableName: deps.db.tableName,
        Key: keys.delivery(d.shop_id, d.endpoint_id, d.id),
        ConsistentRead: true,
      })
    ).Item ?? {};
  const indexKeys = (item: Record<string, unknown>) =>
    Object.keys(item)
      .filter((k) => /^gsi[12]/.test(k))
      .sort();

  it(
    'a fan-out row is in neither gsi1 nor gsi2, and its ' + 'success leaves it in none; a retried one enters both',
    async () => {
      const { rows } = await endpointWith(2);
      const [ok, failing] = rows as [DeliveryRecord, DeliveryRecord];
      expect(indexKeys(await stored(ok))).toEqual([]);
      expect(await stored(ok)).toMatchObject({ status: 'pending', sweep_at: null });
      let answer = 204;
      const h = harness(() => ({ status: answer }));
      expect(await sendBatch(h, [messageOf(ok)])).toEqual(['delivered']);
      expect(indexKeys(await stored(ok))).toEqual([]);
      expect(await stored(ok)).toMatchObject({ status: 'succeeded', sweep_at: null });
      answer = 500;
      expect(await sendBatch(h, [messageOf(failing)])).toEqual(['retry_scheduled']);
      const retrying = await stored(failing);
      expect(indexKeys(retrying)).toEqual(['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk']);
      expect(retrying).toMatchObject({
        status: 'retrying',
        gsi1sk: failing.id,
        gsi2sk: `${String(retrying.sweep_at)}#${failing.id}`,
      });
      expect((await store.listOpenForEndpoint(failing.shop_id, failing.endpoint_id)).map((d) => d.id)).toEqual([
        failing.id,
      ]);
    },
  );

  it(
    'a fast-path row put off for want of a slot enters both indexes ' +
      "(one write), where the endpoint's due deliveries are read",
    async () => {
      const { rows } = await endpointWith(4);
      const h = harness(() => ({ status: null, error: 'timeout after 1000 ms' }));
      expect(await sendBatch(h, [messageOf(rows[0] as DeliveryRecord)])).toEqual(['retry_scheduled']);
      const writes: string[] = [];
      const undo = observeTable(
        deps.db,
        (operation, input) => void writes.push(`${operation} ${String((input as { Key?: { sk?: string } }).Key?.sk)}`),
      );
      try {
        // After an unanswered attempt, one at a time: the other two are put off, no attempt used.
        expect(
          await sendBatch(
            h,
            rows.slice(1).map((r) => messageOf(r)),
          ),
        ).toEqual(['retry_scheduled', 'deferred', 'deferred']);
      } finally {
        undo();
      }
      const deferred = rows.slice(2);
      for (const d of deferred) {
        expect(
          writes.filter((w) => w === `UpdateItem ${keys.delivery(d.shop_id, d.endpoint_id, d.id).sk}`),
        ).toHaveLength(1);
        const item = await stored(d);
        expect(indexKeys(item)).toEqual(['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk']);
        expect(item).toMatchObject({ status: 'pending', attempts: 0, sweep_at: expect.any(String) });
      }
      // Due now, with the two retrying ones not due for a minute: a success's pull takes exactly the put-off ones.
      const due = await store.listDueForEndpoint(rows[0]!.shop_id, rows[0]!.endpoint_id, new Date(), 10);
      expect(due.map((m) => m.delivery_id).sort()).toEqual(deferred.map((d) => d.id).sort());
    },
  );

  it(
    'disabling an endpoint leaves its fast-path rows (in no ' +
      'index) to the consumer, which cancels each when it meets it',
    async () => {
      const { rows, shop, endpoint } = await endpointWith(1);
      const row0 = rows[0] as DeliveryRecord;
      await updateEndpoint(
        { ...deps, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) },
        shop.id,
        endpoint.id,
        { enabled: false },
      );
      // Not in the endpoint's open deliveries: the disable's cancel did not see it, the stats count it all the same.
      expect(await row(row0)).toMatchObject({ status: 'pending' });
      expect(await store.countOpenForEndpoint(shop.id, endpoint.id, new Date())).toEqual({ pending: 1, retrying: 0 });
      const h = harness();
      expect(await sendBatch(h, [messageOf(row0)])).toEqual(['cancelled']);
      expect(h.posts).toEqual([]);
      const due = await new DynamoDueIndex(deps.db).overdue(new Date(Date.now() + 3_600_000), 100);
      expect(due.map((e) => e.id)).not.toContain(row0.id);
      expect(await row(row0)).toMatchObject({ status: 'cancelled', sweep_at: null });
      expect(indexKeys(await stored(row0))).toEqual([]);
      expect(await store.countOpenForEndpoint(shop.id, endpoint.id, new Date())).toEqual({ pending: 0, retrying: 0 });
    },
  );
});
