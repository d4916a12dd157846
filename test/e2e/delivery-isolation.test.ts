import { simulatedCall } from '../../lib/cli/simulate';
import { answers, closeFaultReceivers, startFaultReceiver, type AnswerPolicy, type FaultReceiver } from '../../bench/lib/fault-receiver';
import { percentile } from '../../bench/lib/stats';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop, type Shop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { call, type HttpReply } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
interface Tenant {
  shop: Shop;
  key: string;
}

const EVENTS = 40;
const INTERVAL_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The contract's "one receiver cannot slow another": a receiver that never answers (the
 * delivery timeout is 2 s here) next to a healthy one, in the same shop and in another shop.
 * The healthy receiver's latency (event written → verified receipt) is compared with a
 * baseline measured on the same stack with two healthy endpoints (the same number of deliveries).
 */
describe('a hanging receiver does not delay deliveries to other endpoints (in-process stack, delivery timeout 2 s)', () => {
  let stack: Stack;
  let baselineP90 = 0;

  const tenant = async (name: string): Promise<Tenant> => {
    const shop = await createShop(stack.deps, { name, owner_email: 'owner@isolation.test' });
    const { key } = await issueKey(stack.deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: true, mode: 'test' });
    return { shop, key };
  };

  const endpoint = async (t: Tenant, name: string, policy: AnswerPolicy): Promise<FaultReceiver & { id: string }> => {
    const receiver = await startFaultReceiver(name, policy);
    const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', { key: t.key, body: { url: receiver.url, events: ['call.completed'] } });
    expect(created.status).toBe(201);
    receiver.setSecret(created.json.secret as string);
    return Object.assign(receiver, { id: created.json.id as string });
  };

  /**
   * `count` calls in quick succession, one every 100 ms at most: 10/s, with two deliveries each,
   * stays under what one DynamoDB Local sustains here, so the latency measured is a delivery's,
   * not a backlog's. Each event's write time is taken just before its ingest.
   */
  const ingest = async (t: Tenant, count: number) => {
    const written = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const { event_ids } = await ingestCall(stack.deps, simulatedCall(t.shop, { withJob: false, emergency: false, endedAt: new Date() }));
      written.set(event_ids[0] as string, t0);
      await sleep(Math.max(0, started + (i + 1) * INTERVAL_MS - performance.now()));
    }
    return { written, lastAt: performance.now() };
  };

  /** Latency per event (Infinity when it never arrived), sorted. */
  const latencies = (receiver: FaultReceiver, written: Map<string, number>) =>
    [...written].map(([id, t0]) => (receiver.firstOk.get(id) ?? Infinity) - t0).sort((a, b) => a - b);

  /** Waits until `deadline` (performance.now()) or until every written event reached the receiver. */
  const waitUntil = async (receiver: FaultReceiver, written: Map<string, number>, deadline: number) => {
    while (performance.now() < deadline && [...written.keys()].some((id) => !receiver.firstOk.has(id))) await sleep(20);
  };

  /** POST …/test `count` times at `perSecond` (under the per-key rate limit; a 429 is retried after Retry-After). */
  const testEvents = async (t: Tenant, endpointId: string, count: number, perSecond: number) => {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      let reply: HttpReply;
      do {
        reply = await call(stack.url, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, { key: t.key });
        if (reply.status === 429) await sleep(1000 * Math.min(5, Number(reply.headers.get('retry-after')) || 1));
      } while (reply.status === 429);
      expect(reply.status).toBe(202);
      await sleep(Math.max(0, started + ((i + 1) * 1000) / perSecond - performance.now()));
    }
  };

  beforeAll(async () => {
    stack = await startTestStack({ deliveryTimeoutMs: 2000, timeScale: 1 });
    // The same number of deliveries as the runs below (two endpoints per event), both healthy.
    const t = await tenant('Baseline');
    const healthy = await endpoint(t, 'baseline', answers.ok());
    await endpoint(t, 'baseline-2', answers.ok());
    const warm = await ingest(t, 10); // JIT, connections, the stream poller's shard
    await waitUntil(healthy, warm.written, performance.now() + 10_000);
    const run = await ingest(t, EVENTS);
    await waitUntil(healthy, run.written, run.lastAt + 10_000);
    const sorted = latencies(healthy, run.written);
    baselineP90 = percentile(sorted, 90);
    if (!Number.isFinite(baselineP90)) throw new Error('the baseline run did not deliver every event');
  }, 90_000);
  afterAll(async () => {
    await closeFaultReceivers(); // drops the hung requests, so the consumer stops at once
    await stack.stop();
  }, 60_000);

  it('same shop: the healthy endpoint gets all 40 events promptly; the hanging one holds few requests', async () => {
    const t = await tenant('Noisy shop');
    const healthy = await endpoint(t, 'healthy', answers.ok());
    const hanging = await endpoint(t, 'hanging', answers.hang());

    const { written, lastAt } = await ingest(t, EVENTS);
    await waitUntil(healthy, written, lastAt + 3000);
    await sleep(Math.max(0, lastAt + 3000 - performance.now())); // the hanging receiver is counted over the same span every run
    const sorted = latencies(healthy, written);
    const p90 = percentile(sorted, 90);
    const bound = 2 * baselineP90 + 200;
    const problems: string[] = [];
    const got = sorted.filter(Number.isFinite).length;
    if (got < EVENTS) problems.push(`healthy receiver got ${got}/${EVENTS} events within 3 s of the last ingest`);
    if (!(p90 <= bound)) problems.push(`healthy p90 ${p90.toFixed(0)} ms > 2 × baseline p90 (${baselineP90.toFixed(0)} ms) + 200 ms = ${bound.toFixed(0)} ms`);
    if (hanging.requests > 10) problems.push(`hanging receiver got ${hanging.requests} requests (at most 10 expected)`);
    expect(problems).toEqual([]);
    expect(healthy.rejected + hanging.rejected).toBe(0);
  }, 60_000);

  it("another shop: 40 test events to shop A's hanging endpoint do not delay shop B's healthy endpoint", async () => {
    const a = await tenant('Shop A (hanging)');
    const b = await tenant('Shop B (healthy)');
    const hanging = await endpoint(a, 'hanging', answers.hang());
    const healthy = await endpoint(b, 'healthy', answers.ok());

    const noise = testEvents(a, hanging.id, EVENTS, 1000 / INTERVAL_MS);
    await sleep(500); // shop A's test events are already piling up when shop B's calls come
    const { written, lastAt } = await ingest(b, EVENTS);
    await noise;
    await waitUntil(healthy, written, lastAt + 3000);
    await sleep(Math.max(0, lastAt + 3000 - performance.now()));
    const sorted = latencies(healthy, written);
    const p90 = percentile(sorted, 90);
    const bound = 2 * baselineP90 + 200;
    const problems: string[] = [];
    const got = sorted.filter(Number.isFinite).length;
    if (got < EVENTS) problems.push(`shop B's receiver got ${got}/${EVENTS} events within 3 s of the last ingest`);
    if (!(p90 <= bound)) problems.push(`shop B p90 ${p90.toFixed(0)} ms > 2 × baseline p90 (${baselineP90.toFixed(0)} ms) + 200 ms = ${bound.toFixed(0)} ms`);
    if (hanging.requests > 10) problems.push(`shop A's hanging receiver got ${hanging.requests} requests (at most 10 expected)`);
    expect(problems).toEqual([]);
    expect(healthy.rejected + hanging.rejected).toBe(0);
  }, 60_000);
});
