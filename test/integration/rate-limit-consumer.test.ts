import { deliverBatch } from '../../shared/delivery/deliver-batch';
import { messageOf, type DeliveryMessage, type DeliveryRecord } from '../../shared/delivery/records';
import type { AttemptDeps } from '../../shared/delivery/ports';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { DynamoAttemptLedger } from '../../shared/delivery/dynamo/attempt-ledger';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { MAX_IN_FLIGHT } from '../../shared/delivery/circuit';
import { MAX_START_GRACE_MS, RATE_PERIOD_MS, START_GRACE_MS, WINDOW_MS } from '../../shared/delivery/rate-window';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';
import { endpointWithPending } from '../helpers/pending-deliveries';

/**
 * The consumer under an endpoint's rate limit, on DynamoDB Local; receiver, queue and scheduler are fakes that
 * record.
 */
describe('the consumer under a rate limit (DynamoDB Local)', () => {
  let deps: Deps;
  let store: DynamoDeliveryStore;
  let endpoints: DynamoEndpointStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
    endpoints = new DynamoEndpointStore(deps.db);
  });

  /**
   * The consumer's clock stands still but for `skew` (ms), which the test moves as time passing
   * would: a slow table on a busy machine never makes a request miss its start grace here.
   */
  function harness(beforePost: () => void = () => undefined) {
    const clock = { base: Date.now(), skew: 0 };
    const posts: { id: string; at: number }[] = [];
    const scheduled: { message: DeliveryMessage; at: Date }[] = [];
    const attemptDeps: AttemptDeps = {
      deliveries: store,
      endpoints,
      ledger: new DynamoAttemptLedger(deps.db),
      order: new DynamoOrderStore(deps.db),
      queue: { send: async () => undefined },
      scheduler: { schedule: async (message, at) => void scheduled.push({ message, at }), needsSchedule: () => false },
      sender: {
        post: async (_url, headers) => (
          posts.push({ id: headers['webhook-id'] as string, at: clock.base + clock.skew }),
          { status: 204, error: null, retryAfterMs: null, durationMs: 1, snippet: null }
        ),
      },
      cipher: deps.cipher,
      checkTarget: async (url) => (beforePost(), { ok: true, url: new URL(url) }),
      settings: { timeoutMs: 1000, deferMs: 250 },
      timeScale: 1,
      now: () => new Date(clock.base + clock.skew),
    };
    return { attemptDeps, posts, scheduled, clock };
  }

  async function endpointWith(count: number, rate_limit: number) {
    const { shop, endpoint, rows } = await endpointWithPending(deps, count, { settings: { rate_limit } });
    return { endpoint: { shop_id: shop.id, id: endpoint.id }, rows };
  }
  const read = (e: { shop_id: string; id: string }) => endpoints.get(e.shop_id, e.id) as Promise<EndpointRecord>;
  const counted = (e: EndpointRecord) => Object.values(e.rate_starts ?? {}).reduce((n, c) => n + c, 0);
  const verdicts = (results: PromiseSettledResult<string>[]) =>
    results.map((r) => (r.status === 'fulfilled' ? r.value : `error: ${String(r.reason)}`));

  it(
    'sends what the rate allows; the rest wait on the queue, with no attempt ' +
      'used and no deferral counted, and go out when the window has room',
    async () => {
      const { endpoint, rows } = await endpointWith(6, 2);
      const h = harness();
      const messages = rows.map((r) => ({ ...messageOf(r), deferrals: 1 }));
      const started = h.clock.base;
      expect(verdicts(await deliverBatch(h.attemptDeps, messages))).toEqual([
        'delivered',
        'delivered',
        'waiting_for_rate',
        'waiting_for_rate',
        'waiting_for_rate',
        'waiting_for_rate',
      ]);
      expect(h.posts).toHaveLength(2);
      // Each wait writes its row's index entry first, so the queue sends finish in any order: read them in the order of
      // their places.
      h.scheduled.sort((a, b) => a.at.getTime() - b.at.getTime());
      // The same messages (their in-flight backoff as it was), each with its place in line: two per window, from a
      // window and the grace on.
      expect(h.scheduled.map((s) => s.message)).toEqual(
        messages.slice(2).map((m, i) => ({ ...m, rate_at: h.scheduled[i]?.at.getTime() })),
      );
      const waits = h.scheduled.map((s) => s.at.getTime() - started);
      expect(Math.min(...waits)).toBeGreaterThanOrEqual(WINDOW_MS + START_GRACE_MS);
      expect(waits[2]).toBeGreaterThan((waits[0] as number) + WINDOW_MS);
      // A wait of seconds keeps the row on its fast path: no index write before its message goes back on the queue.
      for (const r of rows.slice(2))
        expect(await store.get(r)).toMatchObject({ status: 'pending', attempts: 0, sweep_at: null });
      const after = await read(endpoint);
      expect([counted(after), after.health.consecutive_failures, Object.keys(after.leases)]).toEqual([2, 0, []]);

      // Woken at their time: two more go, two wait again.
      h.clock.skew = (h.scheduled[0]?.at.getTime() ?? 0) - h.clock.base;
      const woken = h.scheduled.splice(0).map((s) => s.message);
      expect(verdicts(await deliverBatch(h.attemptDeps, woken))).toEqual([
        'delivered',
        'delivered',
        'waiting_for_rate',
        'waiting_for_rate',
      ]);
      expect(h.posts).toHaveLength(4);
      expect((h.posts[2]?.at as number) - (h.posts[0]?.at as number)).toBeGreaterThan(WINDOW_MS);
      // A delivery that did not wait, coming now, joins the end of the line though the window may have room.
      const line = (await read(endpoint)).rate_tail as number;
      expect(line).toBeGreaterThan(h.clock.base + h.clock.skew);
    },
  );

  it('takes no runway: a success does not pass its slot on, so every request is counted before it starts', async () => {
    const { endpoint, rows } = await endpointWith(10, 100);
    const h = harness();
    const results = verdicts(
      await deliverBatch(
        h.attemptDeps,
        rows.map((r) => messageOf(r)),
      ),
    );
    expect(h.posts).toHaveLength(MAX_IN_FLIGHT);
    expect(results.filter((v) => v === 'deferred')).toHaveLength(10 - MAX_IN_FLIGHT);
    expect(counted(await read(endpoint))).toBe(MAX_IN_FLIGHT);
    // The rate had room: these wait for a slot, as without a rate limit (their backoff grows).
    expect(h.scheduled.every((s) => s.message.deferrals === 1)).toBe(true);
  });

  it('a delivery that waited for the rate gives up its place in line when it waits for a slot instead', async () => {
    const { rows } = await endpointWith(10, 100);
    const h = harness();
    const waited = rows.map((r) => ({ ...messageOf(r), rate_at: Date.now() - 1_000 }));
    const results = verdicts(await deliverBatch(h.attemptDeps, waited));
    expect(results.filter((v) => v === 'deferred')).toHaveLength(10 - MAX_IN_FLIGHT);
    // An in-flight deferral: its backoff counts, and it no longer goes ahead of the rate's line.
    expect(h.scheduled.map((s) => [s.message.deferrals, 'rate_at' in s.message])).toEqual(
      Array.from({ length: 10 - MAX_IN_FLIGHT }, () => [1, false]),
    );
  });

  it(
    'a request that cannot start within the grace of its admission is not ' +
      'sent: its slot is freed and it is queued again at once, no attempt used',
    async () => {
      const { endpoint, rows } = await endpointWith(1, 2);
      const h = harness(() => {
        h.clock.skew += START_GRACE_MS + 50; // the target check and signing took too long
      });
      const row = rows[0] as DeliveryRecord;
      expect(verdicts(await deliverBatch(h.attemptDeps, [messageOf(row)]))).toEqual(['waiting_for_rate']);
      expect(h.posts).toEqual([]);
      const again = h.scheduled[0]?.message as DeliveryMessage;
      // Back in line at its place, asking for twice the time its admission took to start.
      expect(again).toEqual({ ...messageOf(row), rate_at: h.scheduled[0]?.at.getTime(), rate_grace: again.rate_grace });
      expect(again.rate_grace).toBeGreaterThanOrEqual(2 * (START_GRACE_MS + 50));
      expect(again.rate_grace).toBeLessThanOrEqual(MAX_START_GRACE_MS);
      expect(h.scheduled[0]?.at.getTime()).toBeLessThanOrEqual(h.clock.base + h.clock.skew);
      expect(await store.get(row)).toMatchObject({ status: 'pending', attempts: 0 });
      const after = await read(endpoint);
      expect([Object.keys(after.leases), after.health.consecutive_failures, counted(after)]).toEqual([[], 0, 1]);

      // Woken, it is admitted with that grace (its start counts that much longer) and goes out,
      // though its start is as slow again: a slow table or process delays it once, not forever.
      h.scheduled.length = 0;
      h.clock.skew += RATE_PERIOD_MS; // the missed start no longer counts
      expect(verdicts(await deliverBatch(h.attemptDeps, [again]))).toEqual(['delivered']);
      expect(h.posts).toHaveLength(1);
      expect(
        Object.keys((await read(endpoint)).rate_starts ?? {}).some((k) => k.endsWith(`+${again.rate_grace}`)),
      ).toBe(true);
    },
  );

  it(
    'a request whose every start comes 2.5 s after its ' +
      'admission still goes out, its lease covering the late start',
    async () => {
      const { endpoint, rows } = await endpointWith(1, 2);
      const timeoutMs = 1000;
      const leaseLeft: number[] = [];
      const h = harness(() => {
        h.clock.skew += 2_500; // each time, a slow process between the admission and the start
      });
      const post = h.attemptDeps.sender.post;
      h.attemptDeps.sender = {
        post: async (...args) => {
          const lease = Object.values((await read(endpoint)).leases)[0];
          leaseLeft.push((lease?.until ?? 0) - (h.clock.base + h.clock.skew));
          return post(...args);
        },
      };
      let message = messageOf(rows[0] as DeliveryRecord);
      const tries: string[] = [];
      for (let i = 0; i < 5 && h.posts.length === 0; i++) {
        h.scheduled.length = 0;
        tries.push(...verdicts(await deliverBatch(h.attemptDeps, [message])));
        message = h.scheduled[0]?.message ?? message;
        h.clock.skew += RATE_PERIOD_MS + MAX_START_GRACE_MS; // every earlier start has stopped counting
      }
      // Missed its grace while the grace grew to cover the time its starts take, then went out.
      expect(tries.at(-1)).toBe('delivered');
      expect(tries.length).toBeLessThanOrEqual(4);
      expect(h.posts).toHaveLength(1);
      // Started late in its grace, the request and its record still fit in its lease.
      expect(leaseLeft[0]).toBeGreaterThanOrEqual(timeoutMs + 2_000);
    },
  );
});
