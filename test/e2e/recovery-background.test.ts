import { issueKey } from '../../shared/domain/api-keys';
import { newEvent } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { newId } from '../../shared/ids';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import type { DeliveryRecord } from '../../shared/delivery/records';
import { isOpenStatus } from '../../shared/delivery/status';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type Recovery = {
  id: string;
  status: string;
  deliveries_queued: number;
  checked_through: string;
  until: string;
  completed_at: string | null;
};
type StreamImage = Record<string, { S?: string; N?: string }> | undefined;

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('recover of a large window: answered at once, finished in the background (issue 33)', () => {
  let stack: Stack;
  /** Endpoints whose recovery's fan-out dies once between pages, and how often it did. */
  const crashBetweenPages = new Set<string>();
  let crashes = 0;
  beforeAll(async () => {
    stack = await startTestStack({
      deliveryTimeoutMs: 2000,
      wrapHandlers: (h) => ({
        ...h,
        // The stream record of a recovery's second page, as if the fan-out died on it (the whole batch
        // fails; the stream hands it over again).
        fanout: async (event) => {
          for (const r of event.Records) {
            const image = r.dynamodb?.NewImage as StreamImage;
            if (
              image?.entity?.S === 'recovery' &&
              image.pages?.N === '2' &&
              crashBetweenPages.delete(image.endpoint_id?.S ?? '')
            ) {
              crashes++;
              throw new Error('the fan-out died between two pages of a recovery');
            }
          }
          return h.fanout(event);
        },
      }),
    });
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  /** A shop whose endpoint missed `count` events while disabled, enabled again. */
  async function missed(count: number) {
    const shop = await createShop(stack.deps, { name: 'Backlog Shop', owner_email: 'owner@backlog.test' });
    const { key } = await issueKey(stack.deps.apiKeys, {
      shopId: shop.id,
      scopes: [...SCOPES],
      write: true,
      mode: 'test',
    });
    const api = (method: string, path: string, body?: unknown) => call(stack.url, method, path, { key, body });
    let secret = '';
    const receiver = await startReceiver(() => [secret]);
    const created = await api('POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['call.completed'] });
    secret = created.json.secret as string;
    const endpointId = created.json.id as string;
    expect((await api('PATCH', `/v1/webhook-endpoints/${endpointId}`, { enabled: false })).status).toBe(200);
    const since = new Date().toISOString();
    const events = Array.from({ length: count }, () =>
      newEvent(shop.id, 'call.completed', { id: newId('call'), object: 'call' }, new Date()),
    );
    for (let i = 0; i < events.length; i += 25)
      await Promise.all(events.slice(i, i + 25).map((e) => stack.deps.events.put(e)));
    // Missed even if the stream hands them on after the enable: the fan-out sends an endpoint only events
    // created while it was enabled.
    expect((await api('PATCH', `/v1/webhook-endpoints/${endpointId}`, { enabled: true })).status).toBe(200);
    const arrived = () => {
      const ids = new Set(receiver.received.map((r) => r.event.id));
      return events.every((e) => ids.has(e.id));
    };
    return { api, shopId: shop.id, endpointId, since, events, arrived, receiver };
  }

  /**
   * Each event queued once: one delivery to the endpoint, which succeeded. An attempt before the
   * one that succeeded may only have timed out: on two cores under the whole suite's load the
   * receiver in this process can answer later than the delivery timeout, and at-least-once
   * allows the attempt again. Any other failure (a refused or reset connection) fails the test.
   * (The receiver may still see an attempt twice: with hundreds due to one endpoint the consumer
   * sometimes takes a delivery from the table while its own message is on its way, which the
   * contract's at-least-once allows; that is the consumer's, not the recovery's.)
   */
  async function queuedOnce(shopId: string, endpointId: string, eventIds: string[]): Promise<void> {
    const store = new DynamoDeliveryStore(stack.deps.db);
    const read = () =>
      Promise.all(
        eventIds.map(async (id) => (await store.listForEvent(shopId, id)).filter((d) => d.endpoint_id === endpointId)),
      );
    // A timed-out attempt may have reached the receiver: its row waits for the retry a minute later.
    const deadline = Date.now() + 75_000;
    let rows = await read();
    while (rows.flat().some((d) => isOpenStatus(d.status)) && Date.now() < deadline) {
      await settle(1000);
      rows = await read();
    }
    const outcomes = (d: DeliveryRecord) =>
      d.history.map((a) => (a.status !== null && a.status < 300 ? 'succeeded' : a.error?.replace(/ after .*/, '')));
    const sentOnce = (d: DeliveryRecord) => [d.status, outcomes(d).filter((o) => o !== 'timeout')];
    expect(rows.map((r) => r.map(sentOnce))).toEqual(eventIds.map(() => [['succeeded', ['succeeded']]]));
  }

  /** Polls the recovery as a caller would, until it ends; every answer along the way. */
  async function poll(
    api: Awaited<ReturnType<typeof missed>>['api'],
    endpointId: string,
    id: string,
  ): Promise<Recovery[]> {
    const seen: Recovery[] = [];
    // Generous: under the whole suite's load on two cores, DynamoDB Local serves every stack at once
    // (a page has taken 16 s).
    const deadline = Date.now() + 90_000;
    while (seen.at(-1)?.status !== 'completed') {
      if (Date.now() > deadline) throw new Error(`the recovery never completed: ${JSON.stringify(seen.at(-1))}`);
      const reply = await api('GET', `/v1/webhook-endpoints/${endpointId}/recoveries/${id}`);
      expect(reply.status).toBe(200);
      seen.push(reply.json as Recovery);
      await settle(100);
    }
    return seen;
  }

  it('320 missed events: running after a page of ≤ 100, then completed, each queued once', async () => {
    const t = await missed(320);
    const started = Date.now();
    const reply = await t.api('POST', `/v1/webhook-endpoints/${t.endpointId}/recover`, { since: t.since });
    const answeredMs = Date.now() - started;
    expect(reply.status).toBe(202);
    const answer = reply.json as Recovery;
    expect(answer).toMatchObject({ status: 'running', completed_at: null });
    expect(answer.deliveries_queued).toBeGreaterThan(0);
    expect(answer.deliveries_queued).toBeLessThanOrEqual(100);
    // One page before the answer (at most 100 events, no step begun after a second), whatever the window.
    expect(answeredMs).toBeLessThan(5_000);

    const seen = await poll(t.api, t.endpointId, answer.id);
    const counts = seen.map((r) => r.deliveries_queued);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(seen.at(-1)).toMatchObject({
      status: 'completed',
      deliveries_queued: 320,
      checked_through: answer.until,
      completed_at: expect.any(String),
    });
    await waitFor(t.arrived, 90_000, 'every recovered event');
    await settle(500);
    await queuedOnce(
      t.shopId,
      t.endpointId,
      t.events.map((e) => e.id),
    );
    expect(t.receiver.rejected).toHaveLength(0);
  }, 240_000);

  it('a fan-out dying between two pages: the page comes again, the recovery completes, each queued once', async () => {
    // More than two pages of 100: the record of page 2 is a running recovery's, which the fan-out takes.
    const t = await missed(250);
    crashBetweenPages.add(t.endpointId);
    const reply = await t.api('POST', `/v1/webhook-endpoints/${t.endpointId}/recover`, { since: t.since });
    expect(reply.status).toBe(202);
    const seen = await poll(t.api, t.endpointId, (reply.json as Recovery).id);
    expect(crashes).toBe(1);
    expect(seen.at(-1)).toMatchObject({ status: 'completed', deliveries_queued: 250 });
    await waitFor(t.arrived, 90_000, 'every recovered event');
    await settle(500);
    await queuedOnce(
      t.shopId,
      t.endpointId,
      t.events.map((e) => e.id),
    );
  }, 240_000);
});
