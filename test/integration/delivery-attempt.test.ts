import { attemptDelivery, type AttemptDeps } from '../../shared/domain/delivery-attempt';
import { messageOf, newDelivery } from '../../shared/domain/deliveries';
import { newEvent } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import type { Deps } from '../../shared/runtime';
import { DynamoDeliveryStore } from '../../shared/store/deliveries';
import { DynamoEventStore } from '../../shared/store/events';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { useFreshTable } from '../helpers/table';

describe('delivery attempt reads (DynamoDB Local)', () => {
  let deps: Deps;
  let store: DynamoDeliveryStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
  });

  async function pendingDelivery() {
    const shop = await createShop(deps, { name: 'Attempt Shop', owner_email: 'o@attempt.test' });
    const endpoint = await createEndpoint({ ...deps, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) }, shop.id, { url: 'https://hooks.example.com/x', events: ['call.completed'] });
    const now = new Date();
    const event = newEvent(shop.id, 'call.completed', { id: 'call_1' }, now);
    await new DynamoEventStore(deps.db).put(event);
    const row = newDelivery(event, endpoint.id, newId('dlv', now.getTime()), 'fanout', now);
    await store.createMissing([row]);
    return { shop, endpoint, event, row };
  }

  it('reads the row, its event and its endpoint in one request, and null for what is gone', async () => {
    const { shop, endpoint, event, row } = await pendingDelivery();
    const sent: string[] = [];
    deps.db.doc.middlewareStack.add((next, ctx) => async (args) => (sent.push(ctx.commandName ?? ''), next(args)), { step: 'initialize', name: 'countForTest' });
    try {
      const got = await store.getForAttempt(shop.id, event.id, row.id, endpoint.id);
      expect(sent).toEqual(['BatchGetItemCommand']);
      expect(got.delivery).toMatchObject({ id: row.id, status: 'pending', attempts: 0 });
      expect(got.event).toMatchObject({ id: event.id, type: 'call.completed', data: { id: 'call_1' } });
      expect(got.endpoint).toMatchObject({ id: endpoint.id, url: 'https://hooks.example.com/x', enabled: true });
      expect(got.delivery).not.toHaveProperty('pk');
    } finally {
      deps.db.doc.middlewareStack.remove('countForTest');
    }
    const missing = await store.getForAttempt(shop.id, event.id, 'dlv_01jd0000000000000000000000', 'we_01jd0000000000000000000000');
    expect(missing).toEqual({ delivery: null, event: expect.objectContaining({ id: event.id }), endpoint: null });
  });

  it('delivers messages with and without endpoint_id (queued before the field existed) alike', async () => {
    for (const withEndpoint of [true, false]) {
      const { row } = await pendingDelivery();
      const posts: string[] = [];
      const attemptDeps: AttemptDeps = {
        deliveries: store,
        endpoints: new DynamoEndpointStore(deps.db),
        events: new DynamoEventStore(deps.db),
        scheduler: { schedule: async () => undefined },
        sender: { post: async (url, _headers, body) => (posts.push(`${url.toString()} ${body}`), { status: 204, error: null, retryAfterMs: null, durationMs: 1, snippet: null }) },
        cipher: deps.cipher,
        checkTarget: async (url) => ({ ok: true, url: new URL(url) }),
        timeScale: 1,
        now: () => new Date(),
      };
      const { endpoint_id, ...old } = messageOf(row);
      expect(endpoint_id).toBe(row.endpoint_id);
      const verdict = await attemptDelivery(attemptDeps, withEndpoint ? messageOf(row) : old);
      expect(verdict).toBe('delivered');
      expect(posts).toHaveLength(1);
      expect(posts[0]).toContain('https://hooks.example.com/x');
      expect(await store.get(row.shop_id, row.event_id, row.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    }
  });
});
