import { deliverBatch } from '../../shared/delivery/deliver-batch';
import { fanOut, newDelivery, fanOutDeliveryId } from '../../shared/delivery/fan-out';
import { messageOf, type DeliveryMessage, type DeliveryRecord } from '../../shared/delivery/records';
import { toDeliveryResource } from '../../shared/delivery/delivery-resource';
import type { EventRecord } from '../../shared/domain/events';
import { elementOf } from '../../shared/delivery/resource-order';
import { sweep } from '../../shared/delivery/sweep';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoDueIndex } from '../../shared/delivery/dynamo/due-index';
import { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import type { ApiDeps } from '../../shared/wiring/api';
import { orderedEndpoint } from '../helpers/ordered-endpoint';
import { useFreshTable } from '../helpers/table';

/** Ordered delivery on DynamoDB Local: the chains under concurrent fan-outs, a crash between row and chain, releases on end. */
describe('ordered delivery per resource (DynamoDB Local)', () => {
  let deps: ApiDeps;
  let store: DynamoDeliveryStore;
  let order: DynamoOrderStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
    order = new DynamoOrderStore(deps.db);
  });

  /** An ordered endpoint, its fan-out and consumer with a recording queue and receiver; `fail` answers 500 to the named events' first attempt. */
  /** An ordered endpoint (test/helpers/ordered-endpoint.ts); `fail` answers 500 to the named events' first attempt. */
  async function setup(fail: Set<string> = new Set()) {
    const tried = new Set<string>();
    return orderedEndpoint(deps, store, order, (id) => {
      const first = !tried.has(id);
      tried.add(id);
      return fail.has(id) && first ? 500 : 204;
    });
  }
  const rowOf = async (event: EventRecord, endpointId: string) =>
    (await store.listForEvent(event.shop_id, event.id)).find((d) => d.endpoint_id === endpointId) as DeliveryRecord;

  it('concurrent fan-outs of one job: every event sent once, none while an earlier one is open, and the held ones in event order', async () => {
    const s = await setup();
    const jobEvents: EventRecord[] = [];
    for (let i = 0; i < 6; i++)
      jobEvents.push(await s.emit(i === 0 ? 'job.created' : 'job.approved', 'job_concurrent'));
    // All at once: the stream's order is not kept here, only the chain's atomic joins.
    await Promise.all(jobEvents.map((e) => fanOut(s.fanOutDeps, e)));
    const rows = await Promise.all(jobEvents.map((e) => rowOf(e, s.endpoint.id)));
    expect(rows[0]?.held_by).toBeUndefined();
    const held = rows.filter((r) => r.held_by);
    expect(held.length).toBeGreaterThan(0);
    for (const r of held) expect(r).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: null });
    expect(s.queued.length + held.length).toBe(6);

    await s.drain();
    expect([...s.posts].sort()).toEqual(jobEvents.map((e) => e.id).sort());
    expect(new Set(s.posts).size).toBe(6);
    // A held one went out only after every earlier event of the job had.
    for (const r of held) {
      const at = s.posts.indexOf(r.event_id);
      for (const earlier of jobEvents.filter((e) => e.id < r.event_id))
        expect(s.posts.indexOf(earlier.id)).toBeLessThan(at);
    }
    const after = await Promise.all(jobEvents.map((e) => rowOf(e, s.endpoint.id)));
    expect(after.every((r) => r.status === 'succeeded' && r.held_by === undefined)).toBe(true);
    expect(await order.read({ shop_id: s.shop.id, endpoint_id: s.endpoint.id, order_key: 'job_concurrent' })).toEqual(
      [],
    );
  });

  it("a first attempt that fails holds the job's next event until its retry succeeds; another job's event does not wait", async () => {
    const fail = new Set<string>();
    const f = await setup(fail);
    const first = await f.emit('job.created', 'job_a');
    const second = await f.emit('job.approved', 'job_a');
    const other = await f.emit('job.created', 'job_b');
    fail.add(first.id);
    for (const e of [first, second, other]) await fanOut(f.fanOutDeps, e);
    expect((await rowOf(second, f.endpoint.id)).held_by).toBe((await rowOf(first, f.endpoint.id)).id);
    await f.drain(false);
    // The retry is scheduled, the job's second event held, the other job delivered.
    expect(f.posts).toEqual([first.id, other.id]);
    expect(await rowOf(first, f.endpoint.id)).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(await rowOf(second, f.endpoint.id)).toMatchObject({ status: 'pending', attempts: 0 });
    await f.drain(true);
    expect(f.posts).toEqual([first.id, other.id, first.id, second.id]);
  });

  it('a row whose join failed (the fan-out put it in the due index): the sweeper puts it in the chain and holds it behind the open one', async () => {
    const s = await setup();
    const first = await s.emit('job.created', 'job_crash');
    const second = await s.emit('job.approved', 'job_crash');
    await fanOut(s.fanOutDeps, first);
    // The second event's fan-out wrote its row, its chain write failed, and it put the row in the due index before failing.
    const made = newDelivery(second, {
      id: fanOutDeliveryId(second.id, s.endpoint.id),
      endpointId: s.endpoint.id,
      origin: 'fanout',
      now: new Date(),
      sweepGraceMs: 60_000,
      orderKey: 'job_crash',
    });
    const row = { ...made, sweep_at: new Date(Date.now() + 60_000).toISOString() };
    await store.createMissing([row]);
    s.queued.length = 0;
    const swept: DeliveryMessage[] = [];
    const later = () => new Date(Date.now() + 2 * 60_000);
    const sweepDeps = {
      due: new DynamoDueIndex(deps.db),
      order,
      endpoints: new DynamoEndpointStore(deps.db),
      queue: { send: async (m: DeliveryMessage[]) => void swept.push(...m) },
      timeScale: 1,
      now: later,
    };
    await sweep(sweepDeps);
    const firstRow = await rowOf(first, s.endpoint.id);
    // The first is on its fast path (its message is on the queue, not the sweeper's to send); the second joins and is held.
    expect(swept.filter((m) => m.event_id === first.id || m.event_id === second.id)).toEqual([]);
    expect(await rowOf(second, s.endpoint.id)).toMatchObject({ held_by: firstRow.id, next_attempt_at: null });
    // The first is delivered: the second is released and sent.
    await deliverBatch(s.attemptDeps, [messageOf(firstRow)]);
    expect(s.queued).toEqual([messageOf(row)]);
    await s.drain();
    expect(s.posts).toEqual([first.id, second.id]);
  });

  it('the sweeper never sends a held row whose delivery ahead is open, and releases it when that one ended without leaving', async () => {
    const s = await setup();
    const first = await s.emit('job.created', 'job_stale');
    const second = await s.emit('job.approved', 'job_stale');
    await fanOut(s.fanOutDeps, first);
    await fanOut(s.fanOutDeps, second);
    const [firstRow, secondRow] = [await rowOf(first, s.endpoint.id), await rowOf(second, s.endpoint.id)];
    const swept: DeliveryMessage[] = [];
    const sweepDeps = {
      due: new DynamoDueIndex(deps.db),
      order,
      endpoints: new DynamoEndpointStore(deps.db),
      queue: { send: async (m: DeliveryMessage[]) => void swept.push(...m) },
      timeScale: 1,
      now: () => new Date(Date.now() + 2 * 60_000),
    };
    await sweep(sweepDeps);
    expect(swept.map((m) => m.delivery_id)).not.toContain(secondRow.id);
    // The first ends by a write that did not leave its chain (a crash just after it).
    await store.cancel(firstRow);
    swept.length = 0;
    await sweep({ ...sweepDeps, now: () => new Date(Date.now() + 20 * 60_000) });
    expect(swept.filter((m) => m.delivery_id === secondRow.id)).toEqual([{ ...messageOf(secondRow), attempt: 1 }]);
    expect((await rowOf(second, s.endpoint.id)).held_by).toBeUndefined();
  });

  it('disabling the endpoint cancels held and open deliveries alike and empties the chain', async () => {
    const s = await setup();
    const events = [await s.emit('job.created', 'job_off'), await s.emit('job.approved', 'job_off')];
    for (const e of events) await fanOut(s.fanOutDeps, e);
    const [sent, held] = [await rowOf(events[0]!, s.endpoint.id), await rowOf(events[1]!, s.endpoint.id)];
    await new DynamoEndpointStore(deps.db).update(
      s.shop.id,
      s.endpoint.id,
      { enabled: false, disabled_reason: 'manual' },
      new Date().toISOString(),
    );
    // The held row is in the endpoint's open deliveries; the first, sent on its fast path, is in no index.
    expect(await store.cancelOpenForEndpoint(s.shop.id, s.endpoint.id, { before: new Date(Date.now() + 1000) })).toBe(
      1,
    );
    expect(held.held_by).toBe(sent.id);
    const cancelled = await rowOf(events[1]!, s.endpoint.id);
    expect(cancelled).toMatchObject({ id: held.id, status: 'cancelled', next_attempt_at: null });
    // A cancelled delivery waits for nothing: the row drops its hold, and the API shows none.
    expect(cancelled.held_by).toBeUndefined();
    expect(toDeliveryResource(cancelled, 'job.approved').held_by).toBeNull();
    // Its message reaches the consumer, which finds the endpoint disabled and cancels it.
    await deliverBatch(s.attemptDeps, [messageOf(sent)]);
    for (const e of events) expect((await rowOf(e, s.endpoint.id)).status).toBe('cancelled');
    expect(await order.read({ shop_id: s.shop.id, endpoint_id: s.endpoint.id, order_key: 'job_off' })).toEqual([]);
  });

  it("the chain item's writes: a hold stands only while what it waits for is in the chain; a release happens once", async () => {
    const s = await setup();
    const [a, b] = [await s.emit('job.created', 'job_w'), await s.emit('job.approved', 'job_w')];
    const ra = newDelivery(a, {
      id: fanOutDeliveryId(a.id, s.endpoint.id),
      endpointId: s.endpoint.id,
      origin: 'fanout',
      now: new Date(),
      sweepGraceMs: 60_000,
      orderKey: 'job_w',
    });
    const rb = newDelivery(b, {
      id: fanOutDeliveryId(b.id, s.endpoint.id),
      endpointId: s.endpoint.id,
      origin: 'fanout',
      now: new Date(),
      sweepGraceMs: 60_000,
      orderKey: 'job_w',
    });
    await store.createMissing([ra, rb]);
    const member = (d: DeliveryRecord) => ({ ...d, order_key: 'job_w' });
    await order.join(member(ra));
    expect(await order.join(member(rb))).toEqual([elementOf(ra), elementOf(rb)]);
    await order.leave(member(ra), elementOf(ra));
    expect(await order.hold(member(rb), elementOf(ra), new Date())).toBe('ahead_gone');
    await order.join(member(ra));
    expect(await order.hold(member(rb), elementOf(ra), new Date())).toBe('held');
    expect(await order.hold(member(rb), elementOf(ra), new Date())).toBe('held');
    const now = new Date();
    expect(
      await Promise.all([
        order.release(member(rb), elementOf(rb), now, now),
        order.release(member(rb), elementOf(rb), now, now),
      ]),
    ).toEqual(expect.arrayContaining(['released', 'open']));
    await store.cancel(ra);
    expect(await order.release(member(ra), elementOf(ra), now, now)).toBe('ended');
    expect(
      await order.leave({ shop_id: s.shop.id, endpoint_id: s.endpoint.id, order_key: 'job_none' }, 'evt_x/dlv_y'),
    ).toEqual([]);
  });
});
