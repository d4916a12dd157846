import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { messageOf, type DeliveryRecord } from '../../shared/delivery/records';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { call, expectError, type HttpReply } from '../helpers/http';
import { closeReceivers, expectRequests, firstOfEach, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type Delivery = {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  attempt_log: {
    attempt: number;
    response_status: number | null;
    error: string | null;
    response_snippet: string | null;
    duration_ms: number;
  }[];
};

/** A shop of its own with a write key, so tests on one stack never see each other's endpoints. */
async function newTenant(stack: Stack) {
  const shop = await createShop(stack.deps, { name: 'Lifecycle Shop', owner_email: 'owner@lifecycle.test' });
  const { key } = await issueKey(stack.deps.apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(stack.url, method, path, { key, body, headers });
  const endpoint = async (url: string, events: string[] = ['call.completed']) => {
    const r = await api('POST', '/v1/webhook-endpoints', { url, events });
    expect(r.status).toBe(201);
    return { id: r.json.id as string, secret: r.json.secret as string };
  };
  const simulate = async () =>
    (await ingestCall(stack.deps, simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() })))
      .event_ids[0] as string;
  const deliveries = async (endpointId: string, query = '') => {
    const r = await api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries${query}`);
    expect(r.status).toBe(200);
    return r.json as { data: Delivery[]; has_more: boolean; next_cursor: string | null };
  };
  return { shop, key, api, endpoint, simulate, deliveries };
}

/** Waits until the delivery queue holds no message, waiting or in flight: whatever was sent to it has been handled. */
async function queueDrained(stack: Stack): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const out = await stack.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.queue.url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    // local-aws-sqs counts messages in flight in the first as well.
    if (Number(out.Attributes?.ApproximateNumberOfMessages ?? 1) === 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the delivery queue never drained');
}

const rowsOf = (stack: Stack, shopId: string, eventId: string) =>
  new DynamoDeliveryStore(stack.deps.db).listForEvent(shopId, eventId);

async function waitForRows(
  stack: Stack,
  shopId: string,
  eventId: string,
  done: (rows: DeliveryRecord[]) => boolean,
): Promise<DeliveryRecord[]> {
  let rows: DeliveryRecord[] = [];
  for (let i = 0; i < 400; i++) {
    rows = await rowsOf(stack, shopId, eventId);
    if (done(rows)) return rows;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(
    `delivery rows never reached the expected state: ${JSON.stringify(rows.map((r) => [r.id, r.status, r.attempts]))}`,
  );
}

describe('endpoint lifecycle and visibility (real clock: a failed attempt retries after 1 min)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startTestStack({ deliveryTimeoutMs: 2000 });
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it('GET shows the endpoint without its secret; DELETE answers deleted, frees a place under the cap, and a second DELETE is 404', async () => {
    const t = await newTenant(stack);
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await t.endpoint(`https://hooks.partner.example/${i}`)).id);
    expectError(
      await t.api('POST', '/v1/webhook-endpoints', { url: 'https://hooks.partner.example/17', events: ['*'] }),
      400,
      'parameter_invalid',
    );

    const id = ids[3] as string;
    const shown = await t.api('GET', `/v1/webhook-endpoints/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.json).toMatchObject({
      id,
      object: 'webhook_endpoint',
      url: 'https://hooks.partner.example/3',
      enabled: true,
    });
    expect(shown.text).not.toContain('secret');

    const deleted = await t.api('DELETE', `/v1/webhook-endpoints/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ id, object: 'webhook_endpoint', deleted: true });
    expectError(await t.api('DELETE', `/v1/webhook-endpoints/${id}`), 404, 'resource_missing');
    expectError(await t.api('GET', `/v1/webhook-endpoints/${id}`), 404, 'resource_missing');
    expect(await stack.deps.endpoints.get(t.shop.id, id)).toBeNull(); // its secrets went with its item
    const listed = (await t.api('GET', '/v1/webhook-endpoints')).json.data as { id: string }[];
    expect(listed.map((e) => e.id)).not.toContain(id);

    expect(
      (await t.api('POST', '/v1/webhook-endpoints', { url: 'https://hooks.partner.example/again', events: ['*'] }))
        .status,
    ).toBe(201);
    expectError(
      await t.api('POST', '/v1/webhook-endpoints', { url: 'https://hooks.partner.example/18', events: ['*'] }),
      400,
      'parameter_invalid',
    );
  });

  /** A tenant whose one endpoint answers 500: its first delivery is retrying (the retry is a minute away). */
  async function withRetryingDelivery() {
    const t = await newTenant(stack);
    let secret = '';
    const receiver = await startReceiver(
      () => [secret],
      (_n, res) => res.writeHead(500).end('not yet'),
    );
    const e = await t.endpoint(receiver.url);
    secret = e.secret;
    const eventId = await t.simulate();
    const [retrying] = await waitForRows(stack, t.shop.id, eventId, (rows) => rows[0]?.status === 'retrying');
    return { t, receiver, e, eventId, retrying: retrying as DeliveryRecord };
  }

  it("DELETE cancels the endpoint's retrying delivery: no later attempt reaches the receiver", async () => {
    const { t, receiver, e, eventId, retrying } = await withRetryingDelivery();
    expect((await t.api('DELETE', `/v1/webhook-endpoints/${e.id}`)).status).toBe(200);
    const [cancelled] = await rowsOf(stack, t.shop.id, eventId);
    expect(cancelled).toMatchObject({ id: retrying.id, status: 'cancelled', next_attempt_at: null, attempts: 1 });
    // Its retry message arriving now (as the queue or the sweeper would send it) sends nothing.
    await stack.deps.queue.send([messageOf(cancelled as DeliveryRecord)]);
    await queueDrained(stack);
    expectRequests(receiver.received, 1, stack);
  });

  it("PATCH enabled:false cancels the endpoint's retrying delivery at once; re-enabling does not bring it back", async () => {
    const { t, receiver, e, eventId, retrying } = await withRetryingDelivery();
    const disabled = await t.api('PATCH', `/v1/webhook-endpoints/${e.id}`, { enabled: false });
    expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: 'manual' });
    // Cancelled by the PATCH itself, a minute before its retry would have found the endpoint disabled.
    const [cancelled] = await rowsOf(stack, t.shop.id, eventId);
    expect(cancelled).toMatchObject({ id: retrying.id, status: 'cancelled', next_attempt_at: null, attempts: 1 });
    expect((await t.deliveries(e.id, '?status=retrying')).data).toEqual([]);
    expect((await t.api('GET', `/v1/webhook-endpoints/${e.id}/stats`)).json.deliveries).toMatchObject({
      pending: 0,
      retrying: 0,
    });
    expect((await t.api('PATCH', `/v1/webhook-endpoints/${e.id}`, { enabled: true })).json).toMatchObject({
      enabled: true,
      disabled_reason: null,
    });
    await stack.deps.queue.send([messageOf(cancelled as DeliveryRecord)]);
    await queueDrained(stack);
    expectRequests(receiver.received, 1, stack);
    expect((await rowsOf(stack, t.shop.id, eventId))[0]?.status).toBe('cancelled');
  });

  it('a 500-then-200 receiver: the first attempt is in attempt_log with status 500 and its body; the list filters by status and pages', async () => {
    const t = await newTenant(stack);
    let secret = '';
    // Failing until the redeliver, by time rather than by the count of requests: one attempt may arrive twice.
    let redelivered = false;
    const receiver = await startReceiver(
      () => [secret],
      (_n, res) => (redelivered ? res.writeHead(200).end('ok') : res.writeHead(500).end('{"error":"database locked"}')),
    );
    const e = await t.endpoint(receiver.url);
    secret = e.secret;
    const eventId = await t.simulate();
    await waitForRows(stack, t.shop.id, eventId, (rows) => rows[0]?.status === 'retrying');
    // The retry is a minute away: redeliver now (it supersedes the retrying delivery).
    redelivered = true;
    expect((await t.api('POST', `/v1/events/${eventId}/redeliver`, { endpoint_ids: [e.id] })).status).toBe(202);
    await waitForRows(stack, t.shop.id, eventId, (rows) => rows.some((r) => r.status === 'succeeded'));

    const all = await t.deliveries(e.id);
    expect(all.data).toHaveLength(2);
    const [newest, first] = all.data as [Delivery, Delivery];
    expect(first).toMatchObject({
      event_id: eventId,
      event_type: 'call.completed',
      endpoint_id: e.id,
      status: 'cancelled',
      attempts: 1,
    });
    expect(first.attempt_log).toEqual([
      {
        attempt: 1,
        at: expect.any(String),
        response_status: 500,
        duration_ms: expect.any(Number),
        error: 'HTTP 500',
        response_snippet: '{"error":"database locked"}',
      },
    ]);
    expect(newest).toMatchObject({
      event_id: eventId,
      status: 'succeeded',
      attempts: 1,
      attempt_log: [{ attempt: 1, response_status: 200, error: null, response_snippet: 'ok' }],
    });

    const detail = await t.api('GET', `/v1/events/${eventId}`);
    expect((detail.json.deliveries as Delivery[]).map((d) => [d.event_type, d.attempt_log.length])).toEqual([
      ['call.completed', 1],
      ['call.completed', 1],
    ]);

    expect((await t.deliveries(e.id, '?status=succeeded')).data.map((d) => d.id)).toEqual([newest.id]);
    expect((await t.deliveries(e.id, '?status=cancelled')).data.map((d) => d.id)).toEqual([first.id]);
    expect((await t.deliveries(e.id, '?status=failed')).data).toEqual([]);
    const page1 = await t.deliveries(e.id, '?limit=1');
    expect([page1.data.map((d) => d.id), page1.has_more]).toEqual([[newest.id], true]);
    const page2 = await t.deliveries(e.id, `?limit=1&cursor=${page1.next_cursor}`);
    expect([page2.data.map((d) => d.id), page2.has_more, page2.next_cursor]).toEqual([[first.id], false, null]);

    expectError(await t.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries?status=done`), 400, 'parameter_invalid');
    expectError(await t.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries?limit=0`), 400, 'parameter_invalid');
    expectError(await t.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries?colour=red`), 400, 'parameter_unknown');
    const other = await t.endpoint('https://hooks.partner.example/other');
    expectError(
      await t.api('GET', `/v1/webhook-endpoints/${other.id}/deliveries?limit=1&cursor=${page1.next_cursor}`),
      400,
      'invalid_cursor',
    );
    expectError(
      await t.api(
        'GET',
        `/v1/webhook-endpoints/${e.id}/deliveries?status=cancelled&limit=1&cursor=${page1.next_cursor}`,
      ),
      400,
      'invalid_cursor',
    );
  });

  it('keeps at most the first 1 KiB of a long answer, as text', async () => {
    const t = await newTenant(stack);
    let secret = '';
    const body = `${'x'.repeat(1023)}é and more after the first KiB`;
    const receiver = await startReceiver(
      () => [secret],
      (_n, res) => res.writeHead(200).end(body),
    );
    const e = await t.endpoint(receiver.url);
    secret = e.secret;
    const eventId = await t.simulate();
    await waitForRows(stack, t.shop.id, eventId, (rows) => rows[0]?.status === 'succeeded');
    const [d] = (await t.deliveries(e.id)).data;
    // 1023 bytes of x, then a 2-byte character cut by the limit: dropped rather than garbled.
    expect(d?.attempt_log[0]?.response_snippet).toBe('x'.repeat(1023));
  });

  it('stats after 3 successes and 1 failure: success_rate 0.75, latencies, open deliveries', async () => {
    const t = await newTenant(stack);
    let secret = '';
    const receiver = await startReceiver(
      () => [secret],
      (n, res) => (n === 4 ? res.writeHead(503).end('busy') : res.writeHead(204).end()),
    );
    const e = await t.endpoint(receiver.url);
    secret = e.secret;
    const empty = await t.api('GET', `/v1/webhook-endpoints/${e.id}/stats`);
    expect(empty.json).toEqual({
      object: 'webhook_endpoint_stats',
      endpoint_id: e.id,
      window_hours: 24,
      attempts: 0,
      succeeded: 0,
      failed: 0,
      success_rate: null,
      latency_ms: { p50: null, p95: null },
      deliveries: { pending: 0, retrying: 0, failed: 0 },
    });

    for (let i = 0; i < 4; i++) {
      const eventId = await t.simulate();
      await waitForRows(stack, t.shop.id, eventId, (rows) => rows[0]?.attempts === 1);
    }
    const stats = await t.api('GET', `/v1/webhook-endpoints/${e.id}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.json).toMatchObject({
      attempts: 4,
      succeeded: 3,
      failed: 1,
      success_rate: 0.75,
      deliveries: { pending: 0, retrying: 1, failed: 0 },
    });
    const latency = stats.json.latency_ms as { p50: number; p95: number };
    expect(latency.p50).toBeGreaterThan(0);
    expect(latency.p95).toBeGreaterThanOrEqual(latency.p50);
    expect(latency.p95).toBeLessThan(2500);
  });

  it('redeliver supersedes a retrying delivery of the same event: the receiver gets the event once more, not twice', async () => {
    const t = await newTenant(stack);
    let secret = '';
    let redelivered = false;
    const receiver = await startReceiver(
      () => [secret],
      (_n, res) => res.writeHead(redelivered ? 204 : 500).end(),
    );
    const e = await t.endpoint(receiver.url);
    secret = e.secret;
    const eventId = await t.simulate();
    const [old] = await waitForRows(stack, t.shop.id, eventId, (rows) => rows[0]?.status === 'retrying');
    redelivered = true;
    const reply = await t.api('POST', `/v1/events/${eventId}/redeliver`, {});
    expect(reply.status).toBe(202);
    await waitFor(() => receiver.received.length >= 2, 5000, 'the redelivery');
    const rows = await waitForRows(stack, t.shop.id, eventId, (r) => r.some((d) => d.status === 'succeeded'));
    expect(rows.find((d) => d.id === old?.id)?.status).toBe('cancelled');
    // The old delivery's retry message, arriving later, sends nothing.
    await stack.deps.queue.send([messageOf(old as DeliveryRecord, 2)]);
    await new Promise((r) => setTimeout(r, 500));
    expectRequests(receiver.received, 2, stack);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
  });

  it('recover: events emitted while disabled arrive after re-enable + recover and verify; 409 while disabled; delivered events are not sent again', async () => {
    const t = await newTenant(stack);
    let secret = '';
    const receiver = await startReceiver(() => [secret]);
    const e = await t.endpoint(receiver.url, ['call.completed']);
    secret = e.secret;
    const since = new Date().toISOString();
    const delivered = await t.simulate();
    await waitFor(() => firstOfEach(receiver.received).length === 1, 5000, 'the first delivery');

    expect((await t.api('PATCH', `/v1/webhook-endpoints/${e.id}`, { enabled: false })).status).toBe(200);
    const missed = [await t.simulate(), await t.simulate()];
    await new Promise((r) => setTimeout(r, 300));
    expect(firstOfEach(receiver.received)).toHaveLength(1);
    expectError(await t.api('POST', `/v1/webhook-endpoints/${e.id}/recover`, { since }), 409, 'invalid_state');

    expect((await t.api('PATCH', `/v1/webhook-endpoints/${e.id}`, { enabled: true })).status).toBe(200);
    const until = new Date().toISOString();
    const headers = { 'idempotency-key': 'recover-1' };
    const recovered = await t.api('POST', `/v1/webhook-endpoints/${e.id}/recover`, { since, until }, headers);
    expect(recovered.status).toBe(202);
    // A window of up to 100 events is worked before the answer: complete, with its count.
    expect(recovered.json).toEqual({
      object: 'recovery',
      id: expect.stringMatching(/^rcv_/),
      endpoint_id: e.id,
      since,
      until,
      status: 'completed',
      deliveries_queued: 2,
      checked_through: until,
      created_at: expect.any(String),
      completed_at: expect.any(String),
    });
    const shown = await t.api('GET', `/v1/webhook-endpoints/${e.id}/recoveries/${recovered.json.id as string}`);
    expect([shown.status, shown.json]).toEqual([200, recovered.json]);
    await waitFor(() => firstOfEach(receiver.received).length === 3, 5000, 'the recovered events');
    expect(
      firstOfEach(receiver.received)
        .slice(1)
        .map((r) => r.event.id)
        .sort(),
    ).toEqual([...missed].sort());
    expect(receiver.rejected).toHaveLength(0); // each one verified with the endpoint's secret
    expect(receiver.received.map((r) => r.event.id)).toContain(delivered);

    const replay = await t.api('POST', `/v1/webhook-endpoints/${e.id}/recover`, { since, until }, headers);
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.text]).toEqual([
      202,
      'true',
      recovered.text,
    ]);
    // Now that all three succeeded, a second recovery has nothing to send.
    await waitForRows(stack, t.shop.id, missed[1] as string, (rows) => rows.some((d) => d.status === 'succeeded'));
    await waitForRows(stack, t.shop.id, missed[0] as string, (rows) => rows.some((d) => d.status === 'succeeded'));
    expect((await t.api('POST', `/v1/webhook-endpoints/${e.id}/recover`, { since })).json.deliveries_queued).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(firstOfEach(receiver.received)).toHaveLength(3);
    expectRequests(receiver.received, 3, stack);
  });

  it('recover answers bad windows and bad bodies with 400, changing nothing', async () => {
    const t = await newTenant(stack);
    const e = await t.endpoint('https://hooks.partner.example/recover');
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const cases: [unknown, string][] = [
      [{ since: iso(now - 60_000), until: iso(now - 120_000) }, 'since'],
      [{ since: iso(now - 60_000), until: iso(now - 60_000) }, 'since'],
      [{ since: iso(now - 60_000), until: iso(now + 3_600_000) }, 'until'],
      [{ since: iso(now + 3_600_000) }, 'since'],
      [{ since: iso(now - 31 * 86_400_000) }, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: 1_700_000_000 }, 'since'],
      [{}, 'since'],
      [{ since: iso(now - 60_000), endpoint_ids: [] }, 'endpoint_ids'],
    ];
    for (const [body, param] of cases) {
      const reply: HttpReply = await t.api('POST', `/v1/webhook-endpoints/${e.id}/recover`, body);
      expect(reply.status).toBe(400);
      expect([body, (reply.json.error as { param: string }).param]).toEqual([body, param]);
    }
    expect((await t.deliveries(e.id)).data).toEqual([]);
  });

  it('every new operation answers foreign, unknown and malformed ids with 404', async () => {
    const t = await newTenant(stack);
    const other = await newTenant(stack);
    const foreign = (await other.endpoint('https://hooks.partner.example/foreign')).id;
    const since = new Date(Date.now() - 60_000).toISOString();
    for (const id of [foreign, 'we_01jd0000000000000000000000', 'we_nope', 'evt_01jd0000000000000000000000']) {
      expectError(await t.api('GET', `/v1/webhook-endpoints/${id}`), 404, 'resource_missing');
      expectError(await t.api('DELETE', `/v1/webhook-endpoints/${id}`), 404, 'resource_missing');
      expectError(await t.api('GET', `/v1/webhook-endpoints/${id}/deliveries`), 404, 'resource_missing');
      expectError(await t.api('GET', `/v1/webhook-endpoints/${id}/stats`), 404, 'resource_missing');
      expectError(await t.api('POST', `/v1/webhook-endpoints/${id}/recover`, { since }), 404, 'resource_missing');
      expectError(
        await t.api('GET', `/v1/webhook-endpoints/${id}/recoveries/rcv_01jd0000000000000000000000`),
        404,
        'resource_missing',
      );
    }
    // A recovery is found only under its own endpoint, and only by a well-formed id.
    const mine = await t.endpoint('https://hooks.partner.example/mine');
    const sibling = await t.endpoint('https://hooks.partner.example/sibling');
    const recovery = (await t.api('POST', `/v1/webhook-endpoints/${mine.id}/recover`, { since })).json.id as string;
    expect((await t.api('GET', `/v1/webhook-endpoints/${mine.id}/recoveries/${recovery}`)).status).toBe(200);
    for (const [endpointId, recoveryId] of [
      [sibling.id, recovery],
      [mine.id, 'rcv_01jd0000000000000000000000'],
      [mine.id, 'rcv_nope'],
      [mine.id, 'evt_01jd0000000000000000000000'],
    ]) {
      expectError(
        await t.api('GET', `/v1/webhook-endpoints/${endpointId}/recoveries/${recoveryId}`),
        404,
        'resource_missing',
      );
    }
    expectError(
      await other.api('GET', `/v1/webhook-endpoints/${mine.id}/recoveries/${recovery}`),
      404,
      'resource_missing',
    );
    expect((await other.api('GET', `/v1/webhook-endpoints/${foreign}`)).status).toBe(200);
  });

  it('DELETE needs a write key; the new reads need the webhooks:write scope', async () => {
    const t = await newTenant(stack);
    const e = await t.endpoint('https://hooks.partner.example/scoped');
    const { key: readOnly } = await issueKey(stack.deps.apiKeys, {
      shopId: t.shop.id,
      scopes: ['webhooks:write'],
      write: false,
      mode: 'test',
    });
    const { key: noScope } = await issueKey(stack.deps.apiKeys, {
      shopId: t.shop.id,
      scopes: ['calls:read'],
      write: true,
      mode: 'test',
    });
    expectError(
      await call(stack.url, 'DELETE', `/v1/webhook-endpoints/${e.id}`, { key: readOnly }),
      403,
      'write_key_required',
    );
    expect((await call(stack.url, 'GET', `/v1/webhook-endpoints/${e.id}/stats`, { key: readOnly })).status).toBe(200);
    expectError(
      await call(stack.url, 'GET', `/v1/webhook-endpoints/${e.id}/deliveries`, { key: noScope }),
      403,
      'insufficient_scope',
    );
    expect((await t.api('GET', `/v1/webhook-endpoints/${e.id}`)).status).toBe(200);
  });
});
