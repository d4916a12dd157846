import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { call } from '../helpers/http';
import { closeReceivers, eventually, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newTenant(stack: Stack) {
  const shop = await createShop(stack.deps, { name: 'Race Shop', owner_email: 'owner@race.test' });
  const { key } = await issueKey(stack.deps.apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(stack.url, method, path, { key, body, headers });
  let secret = '';
  const receiver = await startReceiver(() => [secret]);
  const created = await api('POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['call.completed'] });
  expect(created.status).toBe(201);
  secret = created.json.secret as string;
  const endpointId = created.json.id as string;
  const simulate = async () =>
    (await ingestCall(stack.deps, simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() })))
      .event_ids[0] as string;
  const arrivals = (eventId: string) => receiver.received.filter((r) => r.event.id === eventId).length;
  return { shop, api, receiver, endpointId, simulate, arrivals };
}

describe('concurrent redelivers and recovers (issue 33): nothing accepted is lost, no event is delivered twice', () => {
  let stack: Stack;
  /** Shops whose events the stream hands on only when the test lets it: after it has enabled and recovered. */
  const lagging = new Map<string, Promise<void>>();
  beforeAll(async () => {
    // The consumer as it runs by default, several batches at once. A second delivery (row) of an event is a
    // defect; a second request of one delivery is at least once (docs/api.md, Durability).
    stack = await startTestStack({
      deliveryTimeoutMs: 2000,
      wrapHandlers: (h) => ({
        ...h,
        fanout: async (event) => {
          const shopOf = (r: (typeof event.Records)[number]) =>
            (r.dynamodb?.NewImage as Record<string, { S?: string }> | undefined)?.shop_id?.S ?? '';
          await Promise.all(event.Records.map((r) => lagging.get(shopOf(r))));
          return h.fanout(event);
        },
      }),
    });
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it('4 concurrent redelivers naming the same endpoint: the event arrives again, in 4 trials of 4', async () => {
    const t = await newTenant(stack);
    for (let trial = 1; trial <= 4; trial++) {
      const eventId = await t.simulate();
      await waitFor(() => t.arrivals(eventId) >= 1, 5000, `trial ${trial}: the first delivery`);
      const replies = await Promise.all(
        Array.from({ length: 4 }, () =>
          t.api('POST', `/v1/events/${eventId}/redeliver`, { endpoint_ids: [t.endpointId] }),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202]);
      for (const r of replies)
        expect(r.json.deliveries).toMatchObject([{ endpoint_id: t.endpointId, status: 'pending', attempts: 0 }]);
      // Its row says it went: the redelivery carries the event's webhook-id, as a duplicate request does.
      const named = new Set(replies.map((r) => (r.json.deliveries as { id: string }[])[0]?.id));
      await eventually(
        async () =>
          ((await t.api('GET', `/v1/events/${eventId}`)).json.deliveries as { id: string; status: string }[]).every(
            (d) => !named.has(d.id) || d.status === 'succeeded',
          ),
        5000,
        `trial ${trial}: the redelivered event`,
      );
      expect(t.arrivals(eventId)).toBeGreaterThanOrEqual(2);
    }
    // Each trial's own waits bound it (up to 10 s on a busy machine): the test's time is their sum.
  }, 60_000);

  it('5 concurrent recovers of 8 events missed while disabled, handed on late: one delivery of each, each arrives', async () => {
    const t = await newTenant(stack);
    // The fan-out reaches the events only after the enable and the recovers: it leaves them to the recovers.
    let handOn = () => {};
    lagging.set(t.shop.id, new Promise<void>((resolve) => (handOn = resolve)));
    const since = new Date().toISOString();
    const missed: string[] = [];
    let replies: Awaited<ReturnType<typeof t.api>>[];
    try {
      expect((await t.api('PATCH', `/v1/webhook-endpoints/${t.endpointId}`, { enabled: false })).status).toBe(200);
      for (let i = 0; i < 8; i++) missed.push(await t.simulate());
      expect((await t.api('PATCH', `/v1/webhook-endpoints/${t.endpointId}`, { enabled: true })).status).toBe(200);
      const until = new Date().toISOString();
      replies = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          t.api(
            'POST',
            `/v1/webhook-endpoints/${t.endpointId}/recover`,
            { since, until },
            { 'idempotency-key': `race-${i}` },
          ),
        ),
      );
    } finally {
      handOn();
    }
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    await waitFor(() => missed.every((id) => t.arrivals(id) >= 1), 10_000, 'every missed event');
    await settle(1000);
    // One delivery of each between the recovers: the rows. The requests are at least once (docs/api.md, Durability:
    // a delivery pulled from the table while its message is on its way can go twice, even on a calm stack).
    for (const id of missed) expect((await t.api('GET', `/v1/events/${id}`)).json.deliveries).toHaveLength(1);
    expect(t.receiver.rejected).toHaveLength(0);
  }, 60_000);
});
