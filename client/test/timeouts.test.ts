import { ConnectionError, ShopCalls } from '../src';
import { type Reply, type Scripted, scriptedServer, testClient } from './support/server';

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (...script: Reply[]): Promise<Scripted> => (server = await scriptedServer(script));
const shop = { id: 'shop_1', object: 'shop' };

describe('timeouts', () => {
  it('gives each attempt timeoutMs, retries a read that timed out, then says it timed out', async () => {
    const { baseUrl, requests } = await serve('hang');
    const { client, sleeps } = testClient(baseUrl, { timeoutMs: 50, maxRetries: 1 });
    const started = Date.now();
    const error = await client.shop.retrieve().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ timedOut: true, status: undefined });
    expect((error as Error).message).toMatch(
      /^GET http:\/\/127\.0\.0\.1:\d+\/v1\/shop timed out after 50 ms \(2 attempts\)$/,
    );
    expect(requests).toHaveLength(2);
    expect(sleeps).toEqual([250]);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('counts a slow answer as a timeout, and succeeds when the retry is quick', async () => {
    const { baseUrl, requests } = await serve({ status: 200, json: shop, delayMs: 300 }, { status: 200, json: shop });
    const { client } = testClient(baseUrl, { timeoutMs: 100 });
    await expect(client.shop.retrieve()).resolves.toEqual(shop);
    expect(requests).toHaveLength(2);
  });

  it('counts a body that stalls after the headers as a timeout', async () => {
    const { baseUrl, requests } = await serve('stall', { status: 200, json: shop });
    const { client } = testClient(baseUrl, { timeoutMs: 100 });
    await expect(client.shop.retrieve()).resolves.toEqual(shop);
    expect(requests).toHaveLength(2);
  });

  it('takes a per-call timeoutMs over the client’s', async () => {
    const { baseUrl } = await serve({ status: 200, json: shop, delayMs: 150 });
    const { client } = testClient(baseUrl, { timeoutMs: 50, maxRetries: 0 });
    await expect(client.shop.retrieve()).rejects.toMatchObject({ timedOut: true });
    await expect(client.shop.retrieve({ timeoutMs: 2000 })).resolves.toEqual(shop);
  });

  it('does not retry a write without a key that timed out: it may have been done', async () => {
    const { baseUrl, requests } = await serve('hang');
    const { client } = testClient(baseUrl, { timeoutMs: 50 });
    await expect(client.portalSessions.del('ps_1')).rejects.toMatchObject({ timedOut: true });
    expect(requests).toHaveLength(1);
  });

  it('retries a write with a key that timed out, with the same key', async () => {
    const { baseUrl, requests } = await serve('hang', { status: 201, json: { id: 'we_1' } });
    const { client } = testClient(baseUrl, { timeoutMs: 50 });
    await expect(client.webhookEndpoints.create({ url: 'https://a.example/hook', events: ['*'] })).resolves.toEqual({
      id: 'we_1',
    });
    const keys = requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toEqual(expect.any(String));
    expect(keys).toEqual([keys[0], keys[0]]);
  });
});

describe('abort', () => {
  it('rejects with the signal’s reason during a wait between retries, and sends nothing more', async () => {
    const { baseUrl, requests } = await serve({ status: 503, json: {} });
    // The real timer, with a wait far longer than the test: only the abort can end it.
    const client = new ShopCalls({ apiKey: 'sk_test_x', baseUrl, backoff: { baseMs: 60_000 }, random: () => 1 });
    const controller = new AbortController();
    const call = client.calls.retrieve('call_1', { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(1);
  });

  it('rejects at once when the request is in flight, and sends nothing when already aborted', async () => {
    const { baseUrl, requests } = await serve('hang');
    const { client, sleeps } = testClient(baseUrl);
    const controller = new AbortController();
    const call = client.jobs.list({}, { signal: controller.signal }).then((page) => page);
    setTimeout(() => controller.abort(new Error('user left')), 50);
    await expect(call).rejects.toThrow('user left');
    expect(sleeps).toEqual([]);
    await expect(client.jobs.retrieve('job_1', { signal: controller.signal })).rejects.toThrow('user left');
    expect(requests).toHaveLength(1);
  });
});
