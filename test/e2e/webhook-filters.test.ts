import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { call, expectError } from '../helpers/http';
import { closeReceivers, eventually, firstOfEach, startReceiver, waitFor, type Received } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type Endpoint = { id: string; filter: unknown; description: string | null; updated_at: string; url: string };

const BOOKED_OR_EMERGENCY = { 'data.outcome': { $in: ['job_created', 'emergency_escalated'] } };

/** A shop of its own with a write key, so tests on one stack never see each other's endpoints. */
async function newTenant(stack: Stack) {
  const shop = await createShop(stack.deps, { name: 'Filter Shop', owner_email: 'owner@filter.test' });
  const { key } = await issueKey(stack.deps.apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  const api = (method: string, path: string, body?: unknown) => call(stack.url, method, path, { key, body });
  /** A finished call whose `call.completed` has outcome job_created (job), emergency_escalated (emergency) or message_taken (message). */
  const simulate = async (kind: 'job' | 'emergency' | 'message') =>
    (
      await ingestCall(
        stack.deps,
        simulatedCall(shop, { withJob: kind === 'job', emergency: kind === 'emergency', endedAt: new Date() }),
      )
    ).event_ids[0] as string;
  const list = async () => (await api('GET', '/v1/webhook-endpoints')).json.data as Endpoint[];
  return { shop, api, simulate, list };
}

const callIds = (received: Received[]) =>
  received
    .filter((r) => r.event.type === 'call.completed')
    .map((r) => r.event.id)
    .sort();

describe('payload filters on webhook endpoints', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it('a filtered endpoint receives only matching events (fan-out, redeliver to all, recover); a named redeliver and a test send regardless', async () => {
    const t = await newTenant(stack);
    const secrets: string[] = [];
    const filteredReceiver = await startReceiver(() => secrets);
    const allReceiver = await startReceiver(() => secrets);
    const made = await t.api('POST', '/v1/webhook-endpoints', {
      url: filteredReceiver.url,
      events: ['call.completed'],
      filter: BOOKED_OR_EMERGENCY,
    });
    expect(made.status).toBe(201);
    expect(made.json.filter).toEqual(BOOKED_OR_EMERGENCY);
    const plain = await t.api('POST', '/v1/webhook-endpoints', { url: allReceiver.url, events: ['call.completed'] });
    expect(plain.json.filter).toBeNull();
    secrets.push(made.json.secret as string, plain.json.secret as string);
    const filtered = made.json.id as string;
    const all = plain.json.id as string;

    const job = await t.simulate('job');
    const message = await t.simulate('message');
    const emergency = await t.simulate('emergency');
    await waitFor(
      () => firstOfEach(allReceiver.received).length >= 3 && firstOfEach(filteredReceiver.received).length >= 2,
      10_000,
      'fan-out deliveries',
    );
    // Events, as a receiver that dedupes on webhook-id takes them: delivery is at least once.
    expect(callIds(firstOfEach(allReceiver.received))).toEqual([job, message, emergency].sort());
    expect(
      firstOfEach(filteredReceiver.received)
        .map((r) => r.event.data.outcome)
        .sort(),
    ).toEqual(['emergency_escalated', 'job_created']);
    // Not merely undelivered: the fan-out made no delivery of it to the filtered endpoint.
    const rows = await new DynamoDeliveryStore(stack.deps.db).listForEvent(t.shop.id, message);
    expect(rows.map((r) => r.endpoint_id)).toEqual([all]);

    // Redeliver to all: only the endpoints it is for, the filter included.
    const toAll = await t.api('POST', `/v1/events/${message}/redeliver`, {});
    expect(toAll.status).toBe(202);
    expect((toAll.json.deliveries as { endpoint_id: string }[]).map((d) => d.endpoint_id)).toEqual([all]);
    // The redelivery carries the event's webhook-id, as a duplicate request does: its row says it went.
    const redelivery = (toAll.json.deliveries as { id: string }[])[0]?.id;
    await eventually(
      async () =>
        ((await t.api('GET', `/v1/events/${message}`)).json.deliveries as { id: string; status: string }[]).some(
          (d) => d.id === redelivery && d.status === 'succeeded',
        ),
      10_000,
      'redelivery to all',
    );

    // Recover: of what the filtered endpoint missed while disabled, only what matches is queued.
    const since = new Date().toISOString();
    expect((await t.api('PATCH', `/v1/webhook-endpoints/${filtered}`, { enabled: false })).json.enabled).toBe(false);
    const missedJob = await t.simulate('job');
    const missedMessage = await t.simulate('message');
    await waitFor(
      () => callIds(allReceiver.received).includes(missedMessage) && callIds(allReceiver.received).includes(missedJob),
      10_000,
      'events while disabled',
    );
    expect((await t.api('PATCH', `/v1/webhook-endpoints/${filtered}`, { enabled: true })).json.enabled).toBe(true);
    const recovery = await t.api('POST', `/v1/webhook-endpoints/${filtered}/recover`, { since });
    expect(recovery.status).toBe(202);
    expect(recovery.json).toMatchObject({ status: 'completed', deliveries_queued: 1 });
    await waitFor(() => callIds(filteredReceiver.received).includes(missedJob), 10_000, 'recovered event');

    // Named, or a test: sent whatever the filter.
    const named = await t.api('POST', `/v1/events/${message}/redeliver`, { endpoint_ids: [filtered] });
    expect((named.json.deliveries as { endpoint_id: string }[]).map((d) => d.endpoint_id)).toEqual([filtered]);
    expect((await t.api('POST', `/v1/webhook-endpoints/${filtered}/test`)).status).toBe(202);
    await waitFor(
      () =>
        callIds(filteredReceiver.received).includes(message) &&
        filteredReceiver.received.some((r) => r.event.type === 'webhook_endpoint.test'),
      10_000,
      'named redelivery and test',
    );
    // Settled: the filtered endpoint got the matching events, the one named, and nothing else.
    await new Promise((r) => setTimeout(r, 300));
    expect(callIds(firstOfEach(filteredReceiver.received))).toEqual([job, emergency, missedJob, message].sort());
    expect(filteredReceiver.rejected).toEqual([]);
  });

  it('PATCH sets and clears the filter; every endpoint object shows it; an endpoint without one gets every event', async () => {
    const t = await newTenant(stack);
    const secrets: string[] = [];
    const receiver = await startReceiver(() => secrets);
    // Gets every event: once it has one, that event's fan-out is done.
    const witness = await startReceiver(() => secrets);
    secrets.push(
      (await t.api('POST', '/v1/webhook-endpoints', { url: witness.url, events: ['call.completed'] })).json
        .secret as string,
    );
    const made = await t.api('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['call.completed'],
      filter: null,
    });
    expect(made.status).toBe(201);
    expect(made.json.filter).toBeNull();
    secrets.push(made.json.secret as string);
    const id = made.json.id as string;

    const set = await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { filter: { 'data.outcome': 'spam' } });
    expect(set.status).toBe(200);
    expect(set.json.filter).toEqual({ 'data.outcome': 'spam' });
    expect((await t.api('GET', `/v1/webhook-endpoints/${id}`)).json.filter).toEqual({ 'data.outcome': 'spam' });
    expect((await t.list()).map((e) => e.filter)).toEqual([{ 'data.outcome': 'spam' }, null]);
    const rotated = await t.api('POST', `/v1/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.json.filter).toEqual({ 'data.outcome': 'spam' });
    secrets.push(rotated.json.secret as string);
    // A PATCH without it keeps it.
    expect((await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { description: 'CRM' })).json.filter).toEqual({
      'data.outcome': 'spam',
    });

    const skipped = await t.simulate('message');
    await waitFor(() => callIds(witness.received).includes(skipped), 10_000, 'fan-out of the filtered-out event');
    const cleared = await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { filter: null });
    expect(cleared.status).toBe(200);
    expect(cleared.json.filter).toBeNull();
    expect((await t.api('GET', `/v1/webhook-endpoints/${id}`)).json.filter).toBeNull();
    const sent = await t.simulate('message');
    await waitFor(() => callIds(receiver.received).includes(sent), 10_000, 'event after the filter was cleared');
    expect(callIds(firstOfEach(receiver.received))).toEqual([sent]);
    expect(skipped).not.toBe(sent);
  });

  it('an invalid filter is 400 parameter_invalid naming the key, and changes nothing', async () => {
    const t = await newTenant(stack);
    const made = await t.api('POST', '/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      events: ['call.completed'],
      filter: { 'data.outcome': 'job_created' },
    });
    expect(made.status).toBe(201);
    const id = made.json.id as string;
    const before = await t.list();

    const cases: [unknown, string][] = [
      [{ 'data.outcome': { $regex: 'job' } }, 'filter.data.outcome.$regex is not a supported operator'],
      [{ $where: 'this.data.outcome == "job_created"' }, 'filter.$where is not a supported operator'],
      [{ $expr: { $eq: ['$data.outcome', 'spam'] } }, 'filter.$expr is not a supported operator'],
      [
        { 'data.x': { $function: { body: 'return true', args: [], lang: 'js' } } },
        'filter.data.x.$function is not a supported operator',
      ],
      [{ 'data.outcome': { $foo: 1 } }, 'filter.data.outcome.$foo is not a supported operator'],
      [{ 'data.outcome': { $in: 'job_created' } }, 'filter.data.outcome.$in must be an array'],
      [{ 'data.outcome': { $exists: 'yes' } }, 'filter.data.outcome.$exists must be true or false'],
      [{ $and: [] }, 'filter.$and must be a non-empty array of conditions'],
      [{ id: 'evt_1' }, 'filter.id is not a path into the event'],
      [{ 'data.x': [[[[[[[[1]]]]]]]] }, 'filter is nested more than 8 levels deep'],
      [{ 'data.x': 'a'.repeat(4100) }, 'at most 4096'],
      // 1400 characters, 4200 bytes: the limit is on bytes.
      [{ 'data.x': '漢'.repeat(1400) }, 'at most 4096'],
      ['data.outcome', 'must be an object'],
    ];
    for (const [filter, message] of cases) {
      const patched = await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { description: 'changed', filter });
      const error = expectError(patched, 400, 'parameter_invalid');
      expect(error.param).toBe('filter');
      expect(error.message).toContain(message);
      const created = await t.api('POST', '/v1/webhook-endpoints', {
        url: 'http://127.0.0.1:9/other',
        events: ['*'],
        filter,
      });
      expect(expectError(created, 400, 'parameter_invalid')).toMatchObject({
        param: 'filter',
        message: expect.stringContaining(message),
      });
    }
    // Nothing created, nothing changed (not even the description sent beside the bad filter).
    expect(await t.list()).toEqual(before);
  });
});
