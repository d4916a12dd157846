import {
  carriedEvent,
  carryingEvent,
  MESSAGE_EVENT_MAX_BYTES,
  withoutEvent,
  type DeliveryMessage,
  type DeliveryRecord,
} from '../../shared/delivery/records';
import { fanOut, listingOncePerBatch, receives, type FanOutDeps } from '../../shared/delivery/fan-out';
import { newEvent } from '../../shared/domain/events';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { HEALTHY, type EndpointHealth } from '../../shared/delivery/circuit';
import { memoryOrder } from '../helpers/memory-order';

const created = '2026-11-01T00:00:00.000Z';
const endpoint = (id: string, shopId: string, events: string[], health: EndpointHealth = HEALTHY) =>
  ({
    id,
    shop_id: shopId,
    enabled: true,
    events,
    created_at: created,
    enabled_at: created,
    health,
  }) as unknown as EndpointRecord;

function fakeDeps(): FanOutDeps & { lists: string[]; queued: DeliveryMessage[] } {
  const lists: string[] = [];
  const queued: DeliveryMessage[] = [];
  const byShop: Record<string, EndpointRecord[]> = {
    shop_a: [endpoint('we_1', 'shop_a', ['call.completed']), endpoint('we_2', 'shop_a', ['job.created'])],
    shop_b: [endpoint('we_3', 'shop_b', ['call.completed'])],
  };
  return {
    lists,
    queued,
    endpoints: { list: async (shopId) => (lists.push(shopId), byShop[shopId] ?? []) },
    deliveries: { createMissing: async (rows: DeliveryRecord[]) => rows } as unknown as FanOutDeps['deliveries'],
    order: memoryOrder().store,
    queue: { send: async (messages) => void queued.push(...messages) },
    scheduler: { needsSchedule: () => false, schedule: async () => undefined },
    timeScale: 1,
    now: () => new Date('2026-11-22T10:00:00.000Z'),
  };
}

describe('fan-out of a stream batch', () => {
  it("reads each shop's endpoints once per batch and still gives every event its subscribed endpoints", async () => {
    const deps = fakeDeps();
    const batch = listingOncePerBatch(deps);
    const at = new Date('2026-11-22T09:00:00.000Z');
    const events = [
      newEvent('shop_a', 'call.completed', { id: 'call_1' }, at),
      newEvent('shop_a', 'job.created', { id: 'job_1' }, at),
      newEvent('shop_b', 'call.completed', { id: 'call_2' }, at),
      newEvent('shop_a', 'call.completed', { id: 'call_3' }, at),
    ];
    expect(await Promise.all(events.map((e) => fanOut(batch, e)))).toEqual([1, 1, 1, 1]);
    expect(deps.lists.sort()).toEqual(['shop_a', 'shop_b']);
    expect(deps.queued.map((m) => `${m.event_id}>${m.endpoint_id}`)).toEqual([
      `${events[0]?.id}>we_1`,
      `${events[1]?.id}>we_2`,
      `${events[2]?.id}>we_3`,
      `${events[3]?.id}>we_1`,
    ]);
    // Another batch reads again: endpoints may have changed in between.
    await fanOut(listingOncePerBatch(deps), events[0] as never);
    expect(deps.lists).toHaveLength(3);
  });

  it('puts the event in its messages when it is small, ids only when it is not (or when a schedule takes it)', async () => {
    const deps = fakeDeps();
    const at = new Date('2026-11-22T09:00:00.000Z');
    const small = newEvent('shop_a', 'call.completed', { id: 'call_1', summary: 'Boiler leaking' }, at);
    const large = newEvent(
      'shop_a',
      'call.completed',
      { id: 'call_2', transcript: 'x'.repeat(MESSAGE_EVENT_MAX_BYTES) },
      at,
    );
    await fanOut(deps, small);
    await fanOut(deps, large);
    const [withEvent, idsOnly] = deps.queued;
    expect(withEvent).toEqual({
      shop_id: 'shop_a',
      event_id: small.id,
      delivery_id: expect.any(String),
      endpoint_id: 'we_1',
      attempt: 1,
      event: small,
    });
    expect(idsOnly).toEqual({
      shop_id: 'shop_a',
      event_id: large.id,
      delivery_id: expect.any(String),
      endpoint_id: 'we_1',
      attempt: 1,
    });
    expect(withoutEvent(withEvent as DeliveryMessage)).toEqual(
      idsOnly && { ...idsOnly, event_id: small.id, delivery_id: withEvent?.delivery_id },
    );
    // An event that is not the message's is never attached.
    expect(carryingEvent(idsOnly as DeliveryMessage, small)).toBe(idsOnly);
    // …and the consumer takes only a message's own event from it.
    expect(carriedEvent(withEvent as DeliveryMessage)).toEqual(small);
    expect(carriedEvent({ ...(idsOnly as DeliveryMessage), event: small })).toBeUndefined();
  });

  it("writes and enqueues the answering endpoints' deliveries before the failing ones'", async () => {
    const failing: EndpointHealth = { ...HEALTHY, consecutive_failures: 2, last_failure_at: created };
    const open: EndpointHealth = {
      ...failing,
      circuit: 'open',
      consecutive_failures: 5,
      next_probe_at: created,
      probe_interval_ms: 15_000,
    };
    const steps: string[] = [];
    const deps: FanOutDeps = {
      endpoints: {
        list: async () => [
          endpoint('we_open', 'shop_a', ['*'], open),
          endpoint('we_ok', 'shop_a', ['*']),
          endpoint('we_failing', 'shop_a', ['*'], failing),
          endpoint('we_ok2', 'shop_a', ['*']),
        ],
      },
      deliveries: {
        createMissing: async (rows: DeliveryRecord[]) => (
          steps.push(`rows ${rows.map((r) => r.endpoint_id).join(',')}`),
          rows
        ),
      } as unknown as FanOutDeps['deliveries'],
      order: memoryOrder().store,
      queue: { send: async (messages) => void steps.push(`send ${messages.map((m) => m.endpoint_id).join(',')}`) },
      scheduler: { needsSchedule: () => false, schedule: async () => undefined },
      timeScale: 1,
      now: () => new Date('2026-11-22T10:00:00.000Z'),
    };
    const event = newEvent('shop_a', 'call.completed', { id: 'call_1' }, new Date('2026-11-22T09:00:00.000Z'));
    expect(await fanOut(deps, event)).toBe(4);
    expect(steps).toEqual([
      'rows we_ok,we_ok2',
      'send we_ok,we_ok2',
      'rows we_open,we_failing',
      'send we_open,we_failing',
    ]);
  });

  describe('an endpoint whose circuit is open, its probe not due', () => {
    const now = new Date('2026-11-22T10:00:00.000Z');
    const open: EndpointHealth = {
      ...HEALTHY,
      circuit: 'open',
      consecutive_failures: 5,
      last_failure_at: created,
      next_probe_at: '2026-11-22T10:00:10.000Z',
      probe_interval_ms: 15_000,
    };
    const event = newEvent('shop_a', 'call.completed', { id: 'call_1' }, new Date('2026-11-22T09:00:00.000Z'));

    function heldDeps(opts: { existing?: boolean; needsSchedule?: boolean } = {}) {
      const written: DeliveryRecord[] = [];
      const queued: DeliveryMessage[] = [];
      const scheduled: { message: DeliveryMessage; at: Date }[] = [];
      const deps: FanOutDeps = {
        endpoints: {
          list: async () => [endpoint('we_dead', 'shop_a', ['*'], open), endpoint('we_ok', 'shop_a', ['*'])],
        },
        deliveries: {
          createMissing: async (rows: DeliveryRecord[]) => (
            written.push(...rows),
            opts.existing ? rows.filter((r) => r.endpoint_id !== 'we_dead') : rows
          ),
        } as unknown as FanOutDeps['deliveries'],
        order: memoryOrder().store,
        queue: { send: async (messages) => void queued.push(...messages) },
        scheduler: {
          needsSchedule: () => opts.needsSchedule === true,
          schedule: async (message, at) => void scheduled.push({ message, at }),
        },
        timeScale: 1,
        now: () => now,
      };
      return { deps, written, queued, scheduled };
    }

    it('gets its row with the first attempt recorded as circuit_open and a wake-up for the second, no message now', async () => {
      const { deps, written, queued, scheduled } = heldDeps();
      expect(await fanOut(deps, event)).toBe(1);
      expect(queued.map((m) => m.endpoint_id)).toEqual(['we_ok']);
      const row = written.find((r) => r.endpoint_id === 'we_dead');
      expect(row).toMatchObject({
        status: 'retrying',
        attempts: 1,
        last_attempt_at: now.toISOString(),
        next_attempt_at: '2026-11-22T10:01:00.000Z',
        last_response_status: null,
        last_error: 'circuit_open',
        history: [
          {
            attempt: 1,
            at: now.toISOString(),
            status: null,
            duration_ms: 0,
            error: 'circuit_open',
            response_snippet: null,
          },
        ],
      });
      // The queue wakes it at its second attempt; the sweeper looks after a grace if that message is lost.
      expect(Date.parse(row?.sweep_at as string)).toBeGreaterThan(Date.parse('2026-11-22T10:01:00.000Z'));
      expect(scheduled).toEqual([
        {
          message: expect.objectContaining({ delivery_id: row?.id, endpoint_id: 'we_dead', attempt: 2 }),
          at: new Date('2026-11-22T10:01:00.000Z'),
        },
      ]);
    });

    it('a retried batch that finds the row written does not wake it twice', async () => {
      const { deps, scheduled } = heldDeps({ existing: true });
      await fanOut(deps, event);
      expect(scheduled).toEqual([]);
    });

    it('past what the queue can delay, leaves the wake-up to the sweeper (no schedule per delivery of a dead endpoint)', async () => {
      const { deps, written, scheduled } = heldDeps({ needsSchedule: true });
      await fanOut(deps, event);
      expect(scheduled).toEqual([]);
      expect(written.find((r) => r.endpoint_id === 'we_dead')).toMatchObject({
        next_attempt_at: '2026-11-22T10:01:00.000Z',
        sweep_at: '2026-11-22T10:01:00.000Z',
      });
    });

    it('once its probe is due, is sent as usual (it may be the probe)', async () => {
      const { deps, queued, scheduled } = heldDeps();
      await fanOut({ ...deps, now: () => new Date('2026-11-22T10:00:10.000Z') }, event);
      expect(queued.map((m) => m.endpoint_id)).toEqual(['we_ok', 'we_dead']);
      expect(scheduled).toEqual([]);
    });
  });
});

describe("a batch's endpoint reads", () => {
  it("keep the store's other methods, class methods included", async () => {
    class Store {
      constructor(private readonly name: string) {}
      async list() {
        return [];
      }
      async get(id: string) {
        return `${this.name}:${id}`;
      }
    }
    const deps = { ...fakeDeps(), endpoints: new Store('table') };
    const batch = listingOncePerBatch(deps);
    expect(await batch.endpoints.get('we_1')).toBe('table:we_1');
    expect(batch.endpoints.list).not.toBe(deps.endpoints.list);
  });
});

describe("which endpoints an event goes to (receives: recover's and redeliver's rule, which the fan-out narrows)", () => {
  const at = new Date('2026-11-22T09:00:00.000Z');
  const filtered = {
    ...endpoint('we_f', 'shop_a', ['call.completed']),
    filter: { 'data.outcome': { $in: ['booked', 'emergency'] } },
  } as EndpointRecord;
  const all = endpoint('we_all', 'shop_a', ['call.completed']);

  it('a filtered endpoint gets only the events its filter matches; the others get every event of their types', async () => {
    const queued: DeliveryMessage[] = [];
    const deps = {
      ...fakeDeps(),
      endpoints: { list: async () => [filtered, all] },
      queue: { send: async (m: DeliveryMessage[]) => void queued.push(...m) },
    };
    const booked = newEvent('shop_a', 'call.completed', { id: 'call_1', outcome: 'booked' }, at);
    const voicemail = newEvent('shop_a', 'call.completed', { id: 'call_2', outcome: 'voicemail' }, at);
    expect(await fanOut(deps, booked)).toBe(2);
    expect(await fanOut(deps, voicemail)).toBe(1);
    expect(queued.map((m) => `${m.event_id === booked.id ? 'booked' : 'voicemail'}>${m.endpoint_id}`)).toEqual([
      'booked>we_f',
      'booked>we_all',
      'voicemail>we_all',
    ]);
  });

  it('needs the type subscribed and the filter matched; a test event goes to its endpoint whatever the filter', () => {
    expect(receives(filtered, newEvent('shop_a', 'call.completed', { outcome: 'emergency' }, at))).toBe(true);
    expect(receives(filtered, newEvent('shop_a', 'call.completed', { outcome: 'spam' }, at))).toBe(false);
    expect(receives(filtered, newEvent('shop_a', 'job.created', { outcome: 'booked' }, at))).toBe(false);
    expect(receives(filtered, newEvent('shop_a', 'webhook_endpoint.test', { endpoint_id: 'we_f' }, at, 'we_f'))).toBe(
      true,
    );
    expect(receives(all, newEvent('shop_a', 'webhook_endpoint.test', { endpoint_id: 'we_f' }, at, 'we_f'))).toBe(false);
    // Created before the endpoint: never sent to it, filter or not.
    expect(
      receives(
        filtered,
        newEvent('shop_a', 'call.completed', { outcome: 'booked' }, new Date('2026-10-01T00:00:00.000Z')),
      ),
    ).toBe(false);
  });
  it('the fan-out skips an endpoint enabled again after the event was created, and wakes a row an earlier try left', async () => {
    const event = newEvent('shop_a', 'call.completed', { id: 'call_1', outcome: 'booked' }, at);
    const reenabled = { ...all, enabled_at: '2026-11-22T09:00:01.000Z' } as EndpointRecord;
    const queued: DeliveryMessage[] = [];
    const asked: string[] = [];
    const leftover = { id: 'dlv_left', shop_id: 'shop_a', endpoint_id: 'we_all', event_id: event.id, attempts: 0 };
    const deps = {
      ...fakeDeps(),
      endpoints: { list: async () => [reenabled] },
      deliveries: {
        createMissing: async (rows: DeliveryRecord[]) => rows,
        unsent: async (refs: { endpoint_id: string }[]) => {
          asked.push(...refs.map((r) => r.endpoint_id));
          return [leftover];
        },
      } as unknown as FanOutDeps['deliveries'],
      queue: { send: async (m: DeliveryMessage[]) => void queued.push(...m) },
    };
    // Recover's rule still takes it: the endpoint missed it while disabled.
    expect(receives(reenabled, event)).toBe(true);
    expect(await fanOut(deps, event)).toBe(0);
    expect(asked).toEqual(['we_all']);
    expect(queued.map((m) => m.delivery_id)).toEqual(['dlv_left']);
    // Enabled since before the event: the fan-out's own row, and no look for leftovers.
    asked.length = 0;
    queued.length = 0;
    expect(await fanOut({ ...deps, endpoints: { list: async () => [all] } }, event)).toBe(1);
    expect(asked).toEqual([]);
    expect(queued.map((m) => m.endpoint_id)).toEqual(['we_all']);
  });
});
