import { fanOut, type FanOutDeps } from '../../shared/delivery/fan-out';
import { toDeliveryResource } from '../../shared/delivery/delivery-resource';
import { type DeliveryMessage, type DeliveryRecord } from '../../shared/delivery/records';
import { newEvent } from '../../shared/domain/events';
import {
  admitInOrder,
  aheadOf,
  chainMember,
  elementOf,
  oneResourceAtATime,
  orderKeyFor,
  releaseNextInOrder,
  repairHeld,
  type OrderDeps,
} from '../../shared/delivery/resource-order';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { HEALTHY } from '../../shared/delivery/circuit';
import { memoryOrder } from '../helpers/memory-order';

const NOW = new Date('2026-11-22T10:00:00.000Z');

function row(eventId: string, id: string, over: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id,
    shop_id: 'shop_1',
    event_id: eventId,
    event_type: 'job.created',
    endpoint_id: 'we_1',
    status: 'pending',
    attempts: 0,
    last_attempt_at: null,
    next_attempt_at: NOW.toISOString(),
    last_response_status: null,
    last_error: null,
    history: [],
    origin: 'fanout',
    created_at: NOW.toISOString(),
    sweep_at: NOW.toISOString(),
    order_key: 'job_1',
    ...over,
  };
}

function harness() {
  const memory = memoryOrder();
  const queued: DeliveryMessage[] = [];
  const deps: OrderDeps = {
    order: memory.store,
    queue: { send: async (m) => void queued.push(...m) },
    timeScale: 1,
    now: () => NOW,
  };
  const put = (...rows: DeliveryRecord[]) => rows.forEach((r) => memory.rows.set(r.id, r));
  const admit = (r: DeliveryRecord) => admitInOrder(deps, chainMember(r)!);
  const end = async (id: string, status: DeliveryRecord['status'] = 'succeeded') => {
    const ended = { ...(memory.rows.get(id) as DeliveryRecord), status };
    memory.rows.set(id, ended);
    await releaseNextInOrder(deps, ended);
  };
  return { memory, queued, deps, put, admit, end };
}

describe('ordering: which delivery holds which', () => {
  it('is held by the latest open delivery of an earlier event, never by one of its own event or a later one', () => {
    const open = ['evt_01a/dlv_1', 'evt_01b/dlv_2', 'evt_01c/dlv_3', 'evt_01d/dlv_4'];
    expect(aheadOf(open, { event_id: 'evt_01c' })).toBe('evt_01b/dlv_2');
    expect(aheadOf(open, { event_id: 'evt_01a' })).toBeNull();
    // A redeliver of evt_01b beside the row it superseded: the same event does not hold it.
    expect(aheadOf(['evt_01b/dlv_2', 'evt_01b/dlv_9'], { event_id: 'evt_01b' })).toBeNull();
    expect(aheadOf([], { event_id: 'evt_01z' })).toBeNull();
  });

  it('orders by data.id only on endpoints with per_resource, and only events that name a resource', () => {
    const job = { data: { id: 'job_1' } };
    expect(orderKeyFor({ ordering: 'per_resource' }, job)).toBe('job_1');
    expect(orderKeyFor({ ordering: 'none' }, job)).toBeUndefined();
    // A test event is about no resource.
    expect(orderKeyFor({ ordering: 'per_resource' }, { data: { endpoint_id: 'we_1' } })).toBeUndefined();
    expect(orderKeyFor({ ordering: 'per_resource' }, { data: { id: 42 } })).toBeUndefined();
  });

  it("runs one resource's items one after the other in the order given, other resources beside them, and fails the later ones of a failed resource", async () => {
    const log: string[] = [];
    const slow = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const items = [
      { key: 'a', name: 'a1', ms: 30 },
      { key: 'b', name: 'b1', ms: 5 },
      { key: 'a', name: 'a2', ms: 1 },
      { key: null, name: 'x', ms: 1 },
      { key: 'c', name: 'c1', ms: 1, fail: true },
      { key: 'c', name: 'c2', ms: 1 },
    ];
    const results = await oneResourceAtATime(
      items,
      (i) => i.key,
      async (i) => {
        log.push(`start ${i.name}`);
        await slow(i.ms);
        if (i.fail) throw new Error('table down');
        log.push(`end ${i.name}`);
      },
    );
    expect(log.indexOf('start a2')).toBeGreaterThan(log.indexOf('end a1'));
    // b1 did not wait for a1.
    expect(log.indexOf('end b1')).toBeLessThan(log.indexOf('end a1'));
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    expect(log).not.toContain('start c2');
  });
});

describe('ordering: holding and releasing', () => {
  it('holds a later event behind an open earlier one, without a message, and sends it when that one ends', async () => {
    const h = harness();
    const first = row('evt_01a', 'dlv_1');
    const second = row('evt_01b', 'dlv_2');
    h.put(first, second);
    expect(await h.admit(first)).toBe('send');
    expect(await h.admit(second)).toBe('held');
    expect(h.memory.rows.get('dlv_2')).toMatchObject({
      held_by: 'dlv_1',
      next_attempt_at: null,
      status: 'pending',
      attempts: 0,
    });
    // Held rows stay in the due index a grace ahead: the sweeper's net.
    expect(h.memory.rows.get('dlv_2')?.sweep_at).toBe(new Date(NOW.getTime() + 60_000).toISOString());
    expect(h.queued).toEqual([]);

    await h.end('dlv_1', 'failed');
    expect(h.memory.rows.get('dlv_2')).toMatchObject({ next_attempt_at: NOW.toISOString() });
    expect(h.memory.rows.get('dlv_2')?.held_by).toBeUndefined();
    expect(h.queued).toEqual([
      { shop_id: 'shop_1', event_id: 'evt_01b', delivery_id: 'dlv_2', endpoint_id: 'we_1', attempt: 1 },
    ]);
    expect(h.memory.list(chainMember(first)!)).toEqual(['evt_01b/dlv_2']);
  });

  it('releases only the head: a chain of three goes out one by one', async () => {
    const h = harness();
    const rows = [row('evt_01a', 'dlv_1'), row('evt_01b', 'dlv_2'), row('evt_01c', 'dlv_3')];
    h.put(...rows);
    expect(await Promise.all(rows.map(h.admit))).toEqual(['send', 'held', 'held']);
    expect(h.memory.rows.get('dlv_3')?.held_by).toBe('dlv_2');
    await h.end('dlv_1');
    expect(h.queued.map((m) => m.delivery_id)).toEqual(['dlv_2']);
    await h.end('dlv_2', 'cancelled');
    expect(h.queued.map((m) => m.delivery_id)).toEqual(['dlv_2', 'dlv_3']);
  });

  it("lets an earlier event that arrives late go out, and never holds another resource's events", async () => {
    const h = harness();
    const later = row('evt_01b', 'dlv_2');
    const late = row('evt_01a', 'dlv_1');
    const other = row('evt_01a', 'dlv_9', { order_key: 'job_2' });
    h.put(later, late, other);
    expect(await h.admit(later)).toBe('send');
    expect(await h.admit(late)).toBe('send');
    expect(await h.admit(other)).toBe('send');
  });

  it('a release that finds the head still open sends nothing; a head whose delivery ended is dropped and the walk goes on', async () => {
    const h = harness();
    const a = row('evt_01a', 'dlv_1');
    const stale = row('evt_01b', 'dlv_2');
    const c = row('evt_01c', 'dlv_3');
    h.put(a, stale, c);
    await h.admit(a);
    await h.admit(stale);
    await h.admit(c);
    // dlv_2 ended without leaving its chain (a crash between its record and its leave).
    h.memory.rows.set('dlv_2', { ...(h.memory.rows.get('dlv_2') as DeliveryRecord), status: 'cancelled' });
    await h.end('dlv_1');
    expect(h.queued.map((m) => m.delivery_id)).toEqual(['dlv_3']);
    expect(h.memory.list(chainMember(a)!)).toEqual(['evt_01c/dlv_3']);
    // dlv_3 is sent, not held: ending something else releases nothing more.
    await releaseNextInOrder(h.deps, row('evt_01z', 'dlv_0', { status: 'succeeded' }));
    expect(h.queued).toHaveLength(1);
  });

  it('does nothing for a delivery that follows no order', async () => {
    const h = harness();
    await releaseNextInOrder(h.deps, row('evt_01a', 'dlv_1', { order_key: undefined, status: 'succeeded' }));
    expect(h.memory.calls).toEqual([]);
  });

  it('a hold whose delivery ahead ends meanwhile is not written: the row is sent instead', async () => {
    const h = harness();
    const a = row('evt_01a', 'dlv_1');
    const b = row('evt_01b', 'dlv_2');
    h.put(a, b);
    await h.admit(a);
    // dlv_1 leaves between dlv_2's join and its hold.
    const hold = h.memory.store.hold.bind(h.memory.store);
    let once = true;
    h.memory.store.hold = async (m, ahead, at) => {
      if (once) {
        once = false;
        h.memory.chains.get('shop_1/we_1/job_1')?.delete(elementOf(a));
      }
      return hold(m, ahead, at);
    };
    expect(await h.admit(b)).toBe('send');
    expect(h.memory.rows.get('dlv_2')?.held_by).toBeUndefined();
  });

  it('the sweeper releases a held row whose delivery ahead ended without leaving, and leaves one whose delivery ahead is open', async () => {
    const h = harness();
    const a = row('evt_01a', 'dlv_1');
    const b = row('evt_01b', 'dlv_2');
    h.put(a, b);
    await h.admit(a);
    await h.admit(b);
    const held = h.memory.rows.get('dlv_2') as DeliveryRecord;
    expect(await repairHeld(h.deps, held)).toBe(false);
    expect(h.queued).toEqual([]);
    h.memory.rows.set('dlv_1', { ...a, status: 'succeeded' });
    expect(await repairHeld(h.deps, held)).toBe(true);
    expect(h.queued.map((m) => m.delivery_id)).toEqual(['dlv_2']);
  });

  it("without a queue (the API's cancels) a released row is due at once, for the sweeper to send", async () => {
    const h = harness();
    const a = row('evt_01a', 'dlv_1');
    const b = row('evt_01b', 'dlv_2');
    h.put(a, b);
    await h.admit(a);
    await h.admit(b);
    h.memory.rows.set('dlv_1', { ...a, status: 'cancelled' });
    await releaseNextInOrder({ ...h.deps, queue: undefined }, { ...a, status: 'cancelled' });
    expect(h.memory.rows.get('dlv_2')).toMatchObject({
      sweep_at: NOW.toISOString(),
      next_attempt_at: NOW.toISOString(),
    });
  });
});

describe('ordering as the API shows it', () => {
  it('names the delivery a held one waits for, and none once it ended, whatever its row still holds', () => {
    const held = row('evt_2', 'dlv_2', { held_by: 'dlv_1', next_attempt_at: null });
    expect(toDeliveryResource(held, 'job.approved').held_by).toBe('dlv_1');
    for (const status of ['cancelled', 'succeeded', 'failed'] as const)
      expect(toDeliveryResource({ ...held, status }, 'job.approved').held_by).toBeNull();
    expect(toDeliveryResource(row('evt_1', 'dlv_1'), 'job.created').held_by).toBeNull();
  });
});

describe('ordering in the fan-out', () => {
  it("sends the first event of a job, holds the second, and sends another job's at once", async () => {
    const memory = memoryOrder();
    const queued: DeliveryMessage[] = [];
    const ordered = {
      id: 'we_1',
      shop_id: 'shop_1',
      enabled: true,
      events: ['*'],
      created_at: '2026-11-01T00:00:00.000Z',
      enabled_at: '2026-11-01T00:00:00.000Z',
      health: HEALTHY,
      ordering: 'per_resource',
    } as unknown as EndpointRecord;
    const plain = { ...ordered, id: 'we_2', ordering: 'none' } as EndpointRecord;
    const deps: FanOutDeps = {
      endpoints: { list: async () => [ordered, plain] },
      deliveries: {
        createMissing: async (rows: DeliveryRecord[]) => (rows.forEach((r) => memory.rows.set(r.id, r)), rows),
      } as unknown as FanOutDeps['deliveries'],
      order: memory.store,
      queue: { send: async (m) => void queued.push(...m) },
      scheduler: { needsSchedule: () => false, schedule: async () => undefined },
      timeScale: 1,
      now: () => NOW,
    };
    const created = newEvent('shop_1', 'job.created', { id: 'job_1' }, NOW);
    const approved = newEvent('shop_1', 'job.approved', { id: 'job_1' }, NOW);
    const other = newEvent('shop_1', 'job.created', { id: 'job_2' }, NOW);
    for (const e of [created, approved, other]) await fanOut(deps, e);
    const sent = queued.map((m) => `${m.event_id}>${m.endpoint_id}`);
    expect(sent).toEqual([
      `${created.id}>we_1`,
      `${created.id}>we_2`,
      `${approved.id}>we_2`,
      `${other.id}>we_1`,
      `${other.id}>we_2`,
    ]);
    const heldRow = [...memory.rows.values()].find((r) => r.event_id === approved.id && r.endpoint_id === 'we_1');
    expect(heldRow).toMatchObject({ order_key: 'job_1', held_by: expect.stringMatching(/^dlv_/) });
    // The unordered endpoint's rows join no chain.
    expect(
      [...memory.rows.values()].filter((r) => r.endpoint_id === 'we_2').every((r) => r.order_key === undefined),
    ).toBe(true);
  });
});
