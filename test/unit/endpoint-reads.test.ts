import type { DeliveryRecord } from '../../shared/delivery/records';
import { getEndpointStats, listEndpointDeliveries, type LifecycleDeps } from '../../shared/domain/endpoint-lifecycle';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';

/** Stores that record the order of their reads; the endpoint's read answers only when the test lets it. */
function stores(endpoint: EndpointRecord | null, rows: DeliveryRecord[]) {
  const reads: string[] = [];
  let answer: () => void = () => undefined;
  const deps = {
    endpoints: {
      get: (_shopId: string, id: string) => {
        reads.push(`endpoint ${id}`);
        return new Promise((resolve) => (answer = () => resolve(endpoint)));
      },
    },
    deliveries: {
      listForEndpoint: (_shopId: string, id: string) => {
        reads.push(`page ${id}`);
        return Promise.resolve({ items: rows, next: undefined });
      },
      countOpenForEndpoint: (_shopId: string, id: string) => {
        reads.push(`open ${id}`);
        return Promise.resolve({ pending: rows.length, retrying: 0 });
      },
    },
    stats: {
      window: (_shopId: string, id: string) => {
        reads.push(`stats ${id}`);
        return Promise.resolve([]);
      },
    },
    now: () => new Date(),
  } as unknown as LifecycleDeps;
  return { deps, reads, answer: () => answer() };
}

const row = (endpointId: string) =>
  ({
    id: newId('dlv'),
    endpoint_id: endpointId,
    event_id: newId('evt'),
    event_type: 'call.completed',
    status: 'pending',
    attempts: 0,
    history: [],
  }) as unknown as DeliveryRecord;

describe("an endpoint's own pages read beside the endpoint", () => {
  const id = newId('we');

  it('deliveries: the page is read while the endpoint is: one round trip, not two', async () => {
    const { deps, reads, answer } = stores({ id } as EndpointRecord, [row(id)]);
    const listing = listEndpointDeliveries(deps, 'shop_1', id, { limit: 20 });
    await new Promise((r) => setImmediate(r));
    expect(reads).toEqual([`endpoint ${id}`, `page ${id}`]);
    answer();
    expect((await listing).items.map((d) => d.endpoint_id)).toEqual([id]);
  });

  it('stats: the counters and the open rows are read while the endpoint is', async () => {
    const { deps, reads, answer } = stores({ id } as EndpointRecord, [row(id)]);
    const stats = getEndpointStats(deps, 'shop_1', id);
    await new Promise((r) => setImmediate(r));
    expect(reads).toEqual([`endpoint ${id}`, `stats ${id}`, `open ${id}`]);
    answer();
    expect(await stats).toMatchObject({ endpoint_id: id });
  });

  it('an unknown endpoint is a 404 whatever the page held', async () => {
    const { deps, answer } = stores(null, [row(id)]);
    const listing = listEndpointDeliveries(deps, 'shop_1', id, { limit: 20 });
    answer();
    await expect(listing).rejects.toMatchObject({ code: 'resource_missing' });
    const stats = stores(null, [row(id)]);
    const reading = getEndpointStats(stats.deps, 'shop_1', id);
    stats.answer();
    await expect(reading).rejects.toMatchObject({ code: 'resource_missing' });
  });

  it('a malformed id is a 404 that reads nothing', async () => {
    const { deps, reads } = stores(null, []);
    await expect(listEndpointDeliveries(deps, 'shop_1', 'we_nope', { limit: 20 })).rejects.toMatchObject({
      code: 'resource_missing',
    });
    await expect(getEndpointStats(deps, 'shop_1', 'we_nope')).rejects.toMatchObject({ code: 'resource_missing' });
    expect(reads).toEqual([]);
  });
});
