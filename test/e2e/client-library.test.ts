import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { ShopCalls, webhooks, type WebhookEvent } from '../../client/src/index';
import { simulatedCall } from '../../lib/cli/simulate';
import { ingestCall } from '../../shared/domain/calls';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

/**
 * A proxy in front of the stack that forwards every request, and drops the answer of the
 * requests `drop` picks: the server acted, the client saw its connection reset.
 */
async function droppingProxy(target: string, drop: (req: IncomingMessage) => boolean) {
  const forwarded: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>;
      forwarded.push(`${req.method} ${req.url} ${headers['idempotency-key'] ?? ''}`);
      const dropIt = drop(req);
      fetch(`${target}${req.url}`, { method: req.method, headers, body })
        .then(async (answer) => {
          const text = await answer.text();
          if (dropIt) return void req.socket.destroy();
          res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(text);
        })
        .catch(() => req.socket.destroy());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The client library as an app uses it, against the local stack. */
describe('the client library against the local stack', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  let client: ShopCalls;
  const simulate = (withJob: boolean) =>
    ingestCall(stack.deps, simulatedCall(stack.demo.shop, { withJob, emergency: false, endedAt: new Date() }));

  beforeAll(async () => {
    stack = await startTestStack();
    client = new ShopCalls({ apiKey: stack.demo.writeKey.key, baseUrl: stack.url });
  }, 60_000);
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it('iterates a list of 250 calls to its end with for await, each once', async () => {
    const made = new Set<string>();
    for (let i = 0; i < 250; i += 10)
      for (const call of await Promise.all(Array.from({ length: 10 }, () => simulate(false)))) made.add(call.call_id);
    const seen: string[] = [];
    for await (const call of client.calls.list({ limit: 100 })) seen.push(call.id);
    expect(seen).toHaveLength(new Set(seen).size);
    expect(seen.filter((id) => made.has(id))).toHaveLength(250);
  }, 240_000);

  it('approves a job once when its first answer is lost on the way: the retry carries the same key', async () => {
    const jobId = (await simulate(true)).job_ids[0] as string;
    const job = await client.jobs.retrieve(jobId);
    let posts = 0;
    const proxy = await droppingProxy(stack.url, (req) => req.method === 'POST' && posts++ === 0);
    try {
      const viaProxy = new ShopCalls({
        apiKey: stack.demo.writeKey.key,
        baseUrl: proxy.url,
        sleep: () => Promise.resolve(),
      });
      const approved = await viaProxy.jobs.approve(jobId, { version: job.version });
      expect(approved).toMatchObject({ id: jobId, status: 'approved', version: job.version + 1 });
      // The server got the approval twice, with one key, and acted once.
      const posts = proxy.forwarded.filter((f) => f.startsWith('POST'));
      expect(posts).toHaveLength(2);
      expect(new Set(posts).size).toBe(1);
      expect((await client.jobs.retrieve(jobId)).version).toBe(job.version + 1);
      const approvals = await client.events.list({ type: 'job.approved' }).toArray({ limit: 1000 });
      expect(approvals.filter((e) => 'id' in e.data && e.data.id === jobId)).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('follows the feed while writers commit, and gets each event once', async () => {
    const start = await client.events.feed({ since: new Date().toISOString() });
    const controller = new AbortController();
    const seen: string[] = [];
    const writers = Promise.all(
      [0, 1, 2].map(async () => {
        const ids: string[] = [];
        for (let i = 0; i < 8; i++) ids.push(...(await simulate(i % 2 === 0)).event_ids);
        return ids;
      }),
    );
    const following = (async () => {
      for await (const { event } of client.events.follow({
        cursor: start.next_cursor,
        pollIntervalMs: 50,
        signal: controller.signal,
      }))
        seen.push(event.id);
    })();
    const committed = (await writers).flat();
    await waitFor(() => committed.every((id) => seen.includes(id)), 30_000, 'every committed event in the feed');
    controller.abort();
    await following;
    expect(seen.filter((id) => committed.includes(id)).sort()).toEqual([...committed].sort());
    expect(new Set(seen).size).toBe(seen.length);
  }, 60_000);

  it('verifies real deliveries with webhooks.verify, before and across a secret rotation', async () => {
    // The test receiver accepts what either secret signs; webhooks.verify is checked below on its own.
    const secrets: string[] = [];
    const receiver = await startReceiver(() => secrets);
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url, events: ['call.completed'] });
    secrets.push(endpoint.secret);
    await client.webhookEndpoints.test(endpoint.id);
    await waitFor(() => receiver.received.length >= 1, 30_000, 'the test delivery');
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
    secrets.push(rotated.secret);
    await client.webhookEndpoints.test(endpoint.id);
    await waitFor(() => receiver.received.length >= 2, 30_000, 'the delivery after the rotation');
    const [before, after] = receiver.received;
    const verified: WebhookEvent = await webhooks.verify(before!.raw, before!.headers, endpoint.secret);
    expect(verified.type).toBe('webhook_endpoint.test');
    // After the rotation each delivery is signed with both secrets: a receiver on either verifies it.
    for (const secret of [endpoint.secret, rotated.secret])
      expect((await webhooks.verify(after!.raw, after!.headers, secret)).id).toBe(after!.event.id);
    await expect(webhooks.verify(after!.raw.replace('}', ' }'), after!.headers, rotated.secret)).rejects.toThrow();
  }, 60_000);
});
