import { ConnectionError, ShopCalls } from '../src';
import { type Reply, type Scripted, scriptedServer, testClient } from './support/server';

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (...script: Reply[]): Promise<Scripted> => (server = await scriptedServer(script));
const shop = { id: 'shop_1', object: 'shop' };

/**
 * Attempts counted as the client sends them: an attempt may time out before the server has read it,
 * so the server's record would make these tests depend on the machine's speed.
 */
function sentAttempts(): { sent: Request[]; fetch: (request: Request) => Promise<Response> } {
  const sent: Request[] = [];
  return { sent, fetch: (request) => (sent.push(request), fetch(request)) };
}

describe('timeouts', () => {
  it('gives each attempt timeoutMs, retries a read that timed out, then says it timed out', async () => {
    const { baseUrl } = await serve('hang');
    const { sent, fetch } = sentAttempts();
    const { client, sleeps } = testClient(baseUrl, { timeoutMs: 50, maxRetries: 1, fetch });
    const started = Date.now();
    const error = await client.shop.retrieve().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ timedOut: true, status: undefined });
    expect((error as Error).message).toMatch(
      /^GET http:\/\/127\.0\.0\.1:\d+\/v1\/shop timed out after 50 ms \(2 attempts\)$/,
    );
    expect(sent).toHaveLength(2);
    expect(sleeps).toEqual([250]);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('counts a slow answer as a timeout, and succeeds when the retry is quick', async () => {
    const { baseUrl } = await serve({ status: 200, json: shop, delayMs: 3000 }, { status: 200, json: shop });
    const { sent, fetch } = sentAttempts();
    const { client } = testClient(baseUrl, { timeoutMs: 500, fetch });
    await expect(client.shop.retrieve()).resolves.toEqual(shop);
    expect(sent).toHaveLength(2);
  });

  it('counts a body that stalls after the headers as a timeout', async () => {
    const { baseUrl, requests } = await serve('stall', { status: 200, json: shop });
    const { client } = testClient(baseUrl, { timeoutMs: 500 });
    await expect(client.shop.retrieve()).resolves.toEqual(shop);
    // The stalled answer proves the first attempt arrived, so the server's record is exact here.
    expect(requests).toHaveLength(2);
  });

  it('takes a per-call timeoutMs over the client’s', async () => {
    const { baseUrl } = await serve({ status: 200, json: shop, delayMs: 1000 });
    const { client } = testClient(baseUrl, { timeoutMs: 50, maxRetries: 0 });
    await expect(client.shop.retrieve()).rejects.toMatchObject({ timedOut: true });
    await expect(client.shop.retrieve({ timeoutMs: 10_000 })).resolves.toEqual(shop);
  });

  it('does not retry a write without a key that timed out: it may have been done', async () => {
    const { baseUrl } = await serve('hang');
    const { sent, fetch } = sentAttempts();
    const { client } = testClient(baseUrl, { timeoutMs: 50, fetch });
    await expect(client.portalSessions.del('ps_1')).rejects.toMatchObject({ timedOut: true });
    expect(sent).toHaveLength(1);
  });

  it('retries a write with a key that timed out, with the same key', async () => {
    const { baseUrl } = await serve('hang', { status: 201, json: { id: 'we_1' } });
    const { sent, fetch } = sentAttempts();
    const { client } = testClient(baseUrl, { timeoutMs: 200, fetch });
    await expect(client.webhookEndpoints.create({ url: 'https://a.example/hook', events: ['*'] })).resolves.toEqual({
      id: 'we_1',
    });
    const keys = sent.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).toEqual(expect.any(String));
    expect(keys).toEqual([keys[0], keys[0]]);
  });
});

describe('abort', () => {
  it('rejects with the signal’s reason during a wait between retries, and sends nothing more', async () => {
    const { baseUrl } = await serve({ status: 503, json: {} });
    const { sent, fetch } = sentAttempts();
    // The real timer, with a wait far longer than the test: only the abort can end it.
    const client = new ShopCalls({ apiKey: 'sk_test_x', baseUrl, fetch, backoff: { baseMs: 60_000 }, random: () => 1 });
    const controller = new AbortController();
    const call = client.calls.retrieve('call_1', { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(sent).toHaveLength(1);
  });

  it('rejects at once when the request is in flight, and sends nothing when already aborted', async () => {
    const { baseUrl } = await serve('hang');
    const { sent, fetch } = sentAttempts();
    const { client, sleeps } = testClient(baseUrl, { fetch });
    const controller = new AbortController();
    const call = client.jobs.list({}, { signal: controller.signal }).then((page) => page);
    setTimeout(() => controller.abort(new Error('user left')), 50);
    await expect(call).rejects.toThrow('user left');
    expect(sleeps).toEqual([]);
    await expect(client.jobs.retrieve('job_1', { signal: controller.signal })).rejects.toThrow('user left');
    expect(sent).toHaveLength(1);
  });
});
