import { fanOut, listingOncePerBatch, type DeliveryMessage, type DeliveryRecord, type FanOutDeps } from '../../shared/domain/deliveries';
import { newEvent } from '../../shared/domain/events';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { HEALTHY, type EndpointHealth } from '../../shared/webhooks/circuit';

const created = '2026-11-01T00:00:00.000Z';
const endpoint = (id: string, shopId: string, events: string[], health: EndpointHealth = HEALTHY) =>
  ({ id, shop_id: shopId, enabled: true, events, created_at: created, health }) as unknown as EndpointRecord;

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
    queue: { send: async (messages) => void queued.push(...messages) },
    timeScale: 1,
    now: () => new Date('2026-11-22T10:00:00.000Z'),
  };
}

describe('fan-out of a stream batch', () => {
  it('reads each shop\'s endpoints once per batch and still gives every event its subscribed endpoints', async () => {
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
    expect(deps.queued.map((m) => `${m.event_id}>${m.endpoint_id}`)).toEqual([`${events[0]?.id}>we_1`, `${events[1]?.id}>we_2`, `${events[2]?.id}>we_3`, `${events[3]?.id}>we_1`]);
    // Another batch reads again: endpoints may have changed in between.
    await fanOut(listingOncePerBatch(deps), events[0] as never);
    expect(deps.lists).toHaveLength(3);
  });

  it('writes and enqueues the answering endpoints\' deliveries before the failing ones\'', async () => {
    const failing: EndpointHealth = { ...HEALTHY, consecutive_failures: 2, last_failure_at: created };
    const open: EndpointHealth = { ...failing, circuit: 'open', consecutive_failures: 5, next_probe_at: created, probe_interval_ms: 15_000 };
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
        createMissing: async (rows: DeliveryRecord[]) => (steps.push(`rows ${rows.map((r) => r.endpoint_id).join(',')}`), rows),
      } as unknown as FanOutDeps['deliveries'],
      queue: { send: async (messages) => void steps.push(`send ${messages.map((m) => m.endpoint_id).join(',')}`) },
      timeScale: 1,
      now: () => new Date('2026-11-22T10:00:00.000Z'),
    };
    const event = newEvent('shop_a', 'call.completed', { id: 'call_1' }, new Date('2026-11-22T09:00:00.000Z'));
    expect(await fanOut(deps, event)).toBe(4);
    expect(steps).toEqual(['rows we_ok,we_ok2', 'send we_ok,we_ok2', 'rows we_open,we_failing', 'send we_open,we_failing']);
  });
});
