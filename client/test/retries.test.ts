import { ApiError, ConflictError, ConnectionError, RateLimitError } from '../src';
import { closedPort, errorBody, type Reply, type Scripted, scriptedServer, testClient } from './support/server';

const job = { id: 'job_1', object: 'job', version: 2, status: 'approved' };
const ok = (json: unknown = job): Reply => ({ status: 200, json });
const fail = (status: number, headers?: Record<string, string>): Reply => ({
  status,
  json: errorBody(status === 429 ? 'rate_limited' : 'internal_error', 'try again'),
  headers,
});

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (...script: Reply[]): Promise<Scripted> => (server = await scriptedServer(script));

describe('retries of reads', () => {
  it.each([408, 429, 500, 502, 503, 504])('retries a GET answered %i, waiting with full jitter', async (status) => {
    const { baseUrl, requests } = await serve(fail(status), fail(status), ok());
    const { client, sleeps } = testClient(baseUrl);
    await expect(client.jobs.retrieve('job_1')).resolves.toEqual(job);
    expect(requests).toHaveLength(3);
    // random() is 0.5: half of 500 ms, then half of 1000 ms.
    expect(sleeps).toEqual([250, 500]);
  });

  it.each([400, 401, 403, 404, 409, 422])('does not retry a GET answered %i', async (status) => {
    const { baseUrl, requests } = await serve(fail(status), ok());
    const { client, sleeps } = testClient(baseUrl);
    await expect(client.jobs.retrieve('job_1')).rejects.toMatchObject({ status });
    expect(requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('gives up after maxRetries and throws the last answer as its error', async () => {
    const { baseUrl, requests } = await serve(fail(502), fail(504), fail(503), ok());
    const { client } = testClient(baseUrl);
    const error = await client.calls.retrieve('call_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, requestId: 'req_body' });
    expect(requests).toHaveLength(3);
  });

  it('doubles the wait up to the 8 s cap', async () => {
    const { baseUrl } = await serve(fail(503));
    const { client, sleeps } = testClient(baseUrl, { maxRetries: 6, random: () => 0.999 });
    await expect(client.shop.retrieve()).rejects.toBeInstanceOf(ApiError);
    expect(sleeps).toEqual([499, 999, 1998, 3996, 7992, 7992]);
  });

  it('honours maxRetries 0 from the client, and a per-call maxRetries over it', async () => {
    const { baseUrl, requests } = await serve(fail(500));
    const { client } = testClient(baseUrl, { maxRetries: 0 });
    await expect(client.me.retrieve()).rejects.toBeInstanceOf(ApiError);
    expect(requests).toHaveLength(1);
    await expect(client.me.retrieve({ maxRetries: 3 })).rejects.toBeInstanceOf(ApiError);
    expect(requests).toHaveLength(5);
  });

  it('waits what Retry-After asks, within its cap, then succeeds', async () => {
    const { baseUrl, requests } = await serve(
      fail(429, { 'retry-after': '3' }),
      fail(503, { 'retry-after': '120' }),
      ok(),
    );
    const { client, sleeps } = testClient(baseUrl);
    await expect(client.jobs.retrieve('job_1')).resolves.toEqual(job);
    expect(sleeps).toEqual([3000, 60_000]);
    expect(requests).toHaveLength(3);
  });

  it('throws a RateLimitError carrying Retry-After when the retries run out', async () => {
    const { baseUrl } = await serve(fail(429, { 'retry-after': '7' }));
    const { client } = testClient(baseUrl, { maxRetries: 1 });
    const error = await client.calls.retrieve('call_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 7 });
  });

  it('retries a connection closed mid-request, for a GET', async () => {
    const { baseUrl, requests } = await serve('destroy', ok());
    const { client, sleeps } = testClient(baseUrl);
    await expect(client.jobs.retrieve('job_1')).resolves.toEqual(job);
    expect(requests).toHaveLength(2);
    expect(sleeps).toEqual([250]);
  });
});

describe('retries of writes', () => {
  const idempotencyKeys = (s: Scripted) => s.requests.map((r) => r.headers['idempotency-key']);

  it('sends the same generated Idempotency-Key and body on every retry', async () => {
    const scripted = await serve(fail(500), 'destroy', fail(429), ok());
    const { client, sleeps } = testClient(scripted.baseUrl, { maxRetries: 3 });
    await expect(client.jobs.approve('job_1', { version: 1 })).resolves.toEqual(job);
    const keys = idempotencyKeys(scripted);
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(1);
    expect(new Set(scripted.requests.map((r) => r.body))).toEqual(new Set(['{"version":1}']));
    expect(sleeps).toEqual([250, 500, 1000]);
  });

  it('uses a fresh key for each call, and the caller’s own key when given', async () => {
    const scripted = await serve(ok());
    const { client } = testClient(scripted.baseUrl);
    await client.jobs.decline('job_1', { version: 1 });
    await client.jobs.decline('job_1', { version: 1 });
    await client.jobs.decline('job_1', { version: 1 }, { idempotencyKey: 'decline-job_1-v1' });
    const [first, second, third] = idempotencyKeys(scripted);
    expect(first).not.toBe(second);
    expect(third).toBe('decline-job_1-v1');
  });

  it('retries a write whose key the service still holds (409 idempotency_key_in_use), not a lost race', async () => {
    const inUse: Reply = { status: 409, json: errorBody('idempotency_key_in_use', 'still running') };
    const lost: Reply = { status: 409, json: errorBody('version_conflict', 'moved on', { current_version: 3 }) };
    const scripted = await serve(inUse, ok(), lost);
    const { client } = testClient(scripted.baseUrl);
    await expect(client.shop.update({ paused: true })).resolves.toEqual(job);
    const error = await client.jobs.approve('job_1', { version: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'version_conflict', currentVersion: 3 });
    expect(scripted.requests).toHaveLength(3);
  });

  it.each([500, 502, 503, 504, 408])('does not retry a write without a key answered %i', async (status) => {
    const scripted = await serve(fail(status), ok());
    const { client, sleeps } = testClient(scripted.baseUrl);
    await expect(client.webhookEndpoints.update('we_1', { enabled: false })).rejects.toMatchObject({ status });
    expect(scripted.requests).toHaveLength(1);
    expect(scripted.requests[0]?.headers['idempotency-key']).toBeUndefined();
    expect(sleeps).toEqual([]);
  });

  it('does not retry a write without a key once the request reached the server', async () => {
    const scripted = await serve('destroy', ok());
    const { client } = testClient(scripted.baseUrl);
    await expect(client.events.redeliver('evt_1')).rejects.toBeInstanceOf(ConnectionError);
    expect(scripted.requests).toHaveLength(1);
  });

  it('retries a write without a key on a 429: the rate limit refuses before any operation runs', async () => {
    const scripted = await serve(fail(429, { 'retry-after': '1' }), ok());
    const { client, sleeps } = testClient(scripted.baseUrl);
    await expect(client.webhookEndpoints.test('we_1')).resolves.toEqual(job);
    expect(scripted.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
  });

  it('retries any request whose connection was refused: nothing was sent', async () => {
    let attempts = 0;
    const { client, sleeps } = testClient(await closedPort(), {
      fetch: (request) => (attempts++, fetch(request)),
    });
    const error = await client.webhookEndpoints.del('we_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(
      /^DELETE http:\/\/127\.0\.0\.1:\d+\/v1\/webhook-endpoints\/we_1 failed: .*ECONNREFUSED.*\(3 attempts\)$/,
    );
    expect(attempts).toBe(3);
    expect(sleeps).toHaveLength(2);
  });
});
