import { deliverBatch } from '../../shared/delivery/delivery-attempt';
import { fanOut, messageOf, newDelivery, type DeliveryMessage, type DeliveryRecord, type FanOutDeps } from '../../shared/delivery/deliveries';
import type { AttemptDeps } from '../../shared/delivery/delivery-ports';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { elementOf } from '../../shared/delivery/resource-order';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { derivedId, idTime } from '../../shared/ids';
import { DynamoAttemptLedger } from '../../shared/delivery/dynamo/attempt-ledger';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoEventStore } from '../../shared/store/events';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

/**
 * Ordered delivery against the consumer's shortcuts (DynamoDB Local): a success that pulls an
 * endpoint's due deliveries from the table, and a hold written while the row's attempt is in
 * flight. Either broke a job's order, or left its delivery unsent for good, in the crash bench.
 */
describe('ordered delivery and the consumer\'s races (DynamoDB Local)', () => {
  let deps: ApiDeps;
  let store: DynamoDeliveryStore;
  let order: DynamoOrderStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
    order = new DynamoOrderStore(deps.db);
  });

  /** An ordered endpoint with a recording queue; `onPost` answers each request (204 unless it says otherwise). */
  async function setup(onPost: (eventId: string) => Promise<number | void> = async () => undefined) {
    const shop = await createShop(deps, { name: 'Race Shop', owner_email: 'r@race.test' });
    const endpoint = await createEndpoint({ ...deps, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) }, shop.id, { url: 'https://hooks.example.com/r', events: ['*'], ordering: 'per_resource' });
    const queued: DeliveryMessage[] = [];
    const posts: string[] = [];
    const queue = { send: async (m: DeliveryMessage[]) => void queued.push(...m) };
    const endpoints = new DynamoEndpointStore(deps.db);
    const attemptDeps: AttemptDeps = {
      deliveries: store,
      endpoints,
      ledger: new DynamoAttemptLedger(deps.db),
      order,
      queue,
      scheduler: { schedule: async () => undefined, needsSchedule: () => false },
      sender: {
        post: async (_url, _headers, body) => {
          const id = (JSON.parse(body) as { id: string }).id;
          posts.push(id);
          return { status: (await onPost(id)) ?? 204, error: null, retryAfterMs: null, durationMs: 1, snippet: null };
        },
      },
      cipher: deps.cipher,
      checkTarget: async (url) => ({ ok: true, url: new URL(url) }),
      settings: { timeoutMs: 1000, deferMs: 50 },
      timeScale: 1,
      now: () => new Date(),
    };
    const fanOutDeps: FanOutDeps = { endpoints, deliveries: store, order, queue, scheduler: attemptDeps.scheduler, timeScale: 1, now: () => new Date() };
    const events = new DynamoEventStore(deps.db);
    const emit = async (type: 'job.created' | 'job.approved', jobId: string) => {
      const event = newEvent(shop.id, type, { id: jobId }, new Date(Date.now() + 5));
      await events.put(event);
      return event;
    };
    /** The event's row as its fan-out writes it before the chain is looked at. */
    const rowWritten = async (event: EventRecord, jobId: string) => {
      const row = newDelivery(event, endpoint.id, derivedId('dlv', idTime(event.id), `${event.id}/${endpoint.id}`), 'fanout', new Date(), 60_000, jobId);
      await store.createMissing([row]);
      return row;
    };
    return { shop, endpoint, endpoints, attemptDeps, fanOutDeps, queued, posts, emit, rowWritten };
  }
  const rowOf = async (event: EventRecord, endpointId: string) => (await store.listForEvent(event.shop_id, event.id)).find((d) => d.endpoint_id === endpointId) as DeliveryRecord;

  it('a success that pulls the endpoint\'s due deliveries from the table takes no ordered one its chain has not admitted', async () => {
    const s = await setup();
    const created = await s.emit('job.created', 'job_pull');
    const approved = await s.emit('job.approved', 'job_pull');
    const other = await s.emit('job.created', 'job_other');
    await fanOut(s.fanOutDeps, created);
    // The approval's row is written (due at once, as every new row), its chain not yet looked at.
    const approvedRow = await s.rowWritten(approved, 'job_pull');
    await fanOut(s.fanOutDeps, other);
    // Deliveries wait for a slot: the endpoint is marked, so the next success pulls due rows from the table.
    await s.endpoints.markBacklog((await s.endpoints.get(s.shop.id, s.endpoint.id)) as EndpointRecord, new Date().toISOString());
    const otherMessage = s.queued.find((m) => m.event_id === other.id) as DeliveryMessage;
    await deliverBatch(s.attemptDeps, [otherMessage]);

    // Nor is it listed for a success past its runway to hand back to the queue.
    expect((await store.listDueForEndpoint(s.shop.id, s.endpoint.id, new Date(), 20)).map((m) => m.delivery_id)).not.toContain(approvedRow.id);
    // The job's approval did not go out ahead of its creation, which is still open, nor did anything take its first attempt.
    expect(s.posts).not.toContain(approved.id);
    expect(await rowOf(approved, s.endpoint.id)).toMatchObject({ status: 'pending', attempts: 0 });
    // Its fan-out goes on: held behind the creation, released when that one is delivered.
    await fanOut(s.fanOutDeps, approved);
    expect((await rowOf(approved, s.endpoint.id)).held_by).toBe((await rowOf(created, s.endpoint.id)).id);
    s.queued.length = 0;
    await deliverBatch(s.attemptDeps, [messageOf(await rowOf(created, s.endpoint.id))]);
    expect(s.queued).toEqual([messageOf(approvedRow)]);
    await deliverBatch(s.attemptDeps, s.queued.splice(0));
    expect(s.posts.filter((id) => id !== other.id)).toEqual([created.id, approved.id]);
  });

  it('a hold written while the row\'s first attempt is in flight does not outlive that attempt: its retry goes out', async () => {
    let crossing: { row: DeliveryRecord; ahead: string } | undefined;
    const s = await setup(async (eventId) => {
      if (!crossing || eventId !== crossing.row.event_id) return;
      // Another admission of the row (a fan-out retried, a sweep) finds an earlier delivery in its chain and holds it, mid-request.
      expect(await order.hold({ ...crossing.row, order_key: 'job_cross' }, crossing.ahead, new Date())).toBe('held');
      crossing = undefined;
      return 500;
    });
    const created = await s.emit('job.created', 'job_cross');
    const approved = await s.emit('job.approved', 'job_cross');
    const approvedRow = await s.rowWritten(approved, 'job_cross');
    // The approval was admitted while its chain was empty; the creation joined it after.
    await order.join({ ...approvedRow, order_key: 'job_cross' });
    const createdRow = await s.rowWritten(created, 'job_cross');
    await order.join({ ...createdRow, order_key: 'job_cross' });
    crossing = { row: approvedRow, ahead: elementOf(createdRow) };

    await deliverBatch(s.attemptDeps, [messageOf(approvedRow)]);
    const after = await rowOf(approved, s.endpoint.id);
    expect(after).toMatchObject({ status: 'retrying', attempts: 1 });
    // Attempted, so held by nothing: its retry is sent, not dropped as a held row's message (for good: no release takes a retrying row).
    expect(after.held_by).toBeUndefined();
    await deliverBatch(s.attemptDeps, [messageOf(after)]);
    expect(s.posts).toEqual([approved.id, approved.id]);
    expect((await rowOf(approved, s.endpoint.id)).status).toBe('succeeded');
  });
});
