import { disableIfDue } from '../../shared/delivery/endpoint-failure';
import type { EventRecord } from '../../shared/domain/events';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { HEALTHY } from '../../shared/delivery/circuit';
import { isId } from '../../shared/ids';

const endpoint = (failingSince: string | null): EndpointRecord =>
  ({
    id: 'we_01jd3x0000000000000000000a',
    shop_id: 'shop_01jd3x0000000000000000000a',
    url: 'https://hooks.example.com/x',
    description: null,
    events: ['*'],
    filter: null,
    ordering: 'none',
    rate_limit: null,
    enabled: true,
    disabled_reason: null,
    failing_since: failingSince,
    health: HEALTHY,
    leases: {},
    lease_version: 0,
    created_at: '2026-11-20T00:00:00.000Z',
    enabled_at: '2026-11-20T00:00:00.000Z',
    updated_at: '2026-11-20T00:00:00.000Z',
  }) as unknown as EndpointRecord;

/** The `webhook_endpoint.disabled` events a disable was asked to write (the store refuses all but the first, as its condition does). */
function recording(now: Date) {
  const events: EventRecord[] = [];
  const deps = {
    endpoints: {
      disable: async (_e: EndpointRecord, _r: string, _l: string[], event: EventRecord) => (
        events.push(event),
        events.length === 1
      ),
    },
    deliveries: { cancelOpenForEndpoint: async () => 0 },
    timeScale: 1,
    now: () => now,
  } as unknown as Parameters<typeof disableIfDue>[0];
  return { deps, events };
}

describe('disabling a failing endpoint', () => {
  it('gives the disabled event an id derived from the endpoint and its failure: consumers racing to disable it name one event', async () => {
    const now = new Date('2026-11-24T00:00:00.000Z');
    const { deps, events } = recording(now);
    const failing = endpoint('2026-11-20T00:00:00.000Z');
    await disableIfDue(deps, failing, { kind: 'retry', delayMs: 1000 }, []);
    await disableIfDue(deps, failing, { kind: 'retry', delayMs: 1000 }, []);
    expect(events).toHaveLength(2);
    expect(events[0]?.id).toBe(events[1]?.id);
    expect(isId('evt', events[0]?.id as string)).toBe(true);
    expect(events[0]).toMatchObject({
      type: 'webhook_endpoint.disabled',
      shop_id: failing.shop_id,
      timestamp: now.toISOString(),
    });
  });

  it('names another event for another failure of the same endpoint, and none while it is not due', async () => {
    const { deps, events } = recording(new Date('2026-11-24T00:00:00.000Z'));
    await disableIfDue(deps, endpoint('2026-11-20T00:00:00.000Z'), { kind: 'retry', delayMs: 1000 }, []);
    await disableIfDue(deps, endpoint('2026-11-20T06:00:00.000Z'), { kind: 'retry', delayMs: 1000 }, []);
    await disableIfDue(deps, endpoint('2026-11-23T23:00:00.000Z'), { kind: 'retry', delayMs: 1000 }, []);
    expect(events).toHaveLength(2);
    expect(events[0]?.id).not.toBe(events[1]?.id);
  });
});
