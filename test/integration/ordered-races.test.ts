import { deliverBatch } from '../../shared/delivery/deliver-batch';
import { fanOut } from '../../shared/delivery/fan-out';
import { messageOf, type DeliveryMessage, type DeliveryRecord } from '../../shared/delivery/records';
import type { EventRecord } from '../../shared/domain/events';
import { elementOf } from '../../shared/delivery/resource-order';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import type { ApiDeps } from '../../shared/wiring/api';
import { orderedEndpoint } from '../helpers/ordered-endpoint';
import { useFreshTable } from '../helpers/table';

/**
 * Ordered delivery against the consumer's shortcuts (DynamoDB Local): a success that pulls an
 * endpoint's due deliveries from the table, and a hold written while the row's attempt is in
 * flight. Either broke a job's order, or left its delivery unsent for good, in the crash bench.
 */
describe("ordered delivery and the consumer's races (DynamoDB Local)", () => {
  let deps: ApiDeps;
  let store: DynamoDeliveryStore;
  let order: DynamoOrderStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
    order = new DynamoOrderStore(deps.db);
  });

  /** An ordered endpoint with a recording queue; `onPost` answers each request (204 unless it says otherwise). */
  /** An ordered endpoint (test/helpers/ordered-endpoint.ts); `onPost` answers each request (204 unless it says otherwise). */
  const setup = (onPost?: (eventId: string) => Promise<number | void>) => orderedEndpoint(deps, store, order, onPost);
  const rowOf = async (event: EventRecord, endpointId: string) =>
    (await store.listForEvent(event.shop_id, event.id)).find((d) => d.endpoint_id === endpointId) as DeliveryRecord;

  it("a success that pulls the endpoint's due deliveries from the table takes no ordered one its chain has not admitted", async () => {
    const s = await setup();
    const created = await s.emit('job.created', 'job_pull');
    const approved = await s.emit('job.approved', 'job_pull');
    const other = await s.emit('job.created', 'job_other');
    await fanOut(s.fanOutDeps, created);
    // The approval's row is written (due at once, as every new row), its chain not yet looked at.
    const approvedRow = await s.rowWritten(approved, 'job_pull');
    await fanOut(s.fanOutDeps, other);
    // Deliveries wait for a slot: the endpoint is marked, so the next success pulls due rows from the table.
    await s.endpoints.markBacklog(
      (await s.endpoints.get(s.shop.id, s.endpoint.id)) as EndpointRecord,
      new Date().toISOString(),
    );
    const otherMessage = s.queued.find((m) => m.event_id === other.id) as DeliveryMessage;
    await deliverBatch(s.attemptDeps, [otherMessage]);

    // Nor is it listed for a success past its runway to hand back to the queue.
    expect(
      (await store.listDueForEndpoint(s.shop.id, s.endpoint.id, new Date(), 20)).map((m) => m.delivery_id),
    ).not.toContain(approvedRow.id);
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

  it("a hold written while the row's first attempt is in flight does not outlive that attempt: its retry goes out", async () => {
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
