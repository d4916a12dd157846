import { createShop } from '../../shared/domain/shop';
import { createEndpoint, updateEndpoint, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

/**
 * PATCH derives some of what it writes from the endpoint as read (`disabled_reason`, a fresh start on
 * re-enable, a raised rate): a write that lands between its read and its write is not overwritten with a
 * derivation from the stale read.
 */
describe('updating an endpoint that another writer changes meanwhile (DynamoDB Local)', () => {
  let deps: ApiDeps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });
  const checkUrl = async (url: string) => ({ ok: true as const, url: new URL(url) });

  /** An endpoint, and deps whose first read of it is followed by `meanwhile` (as if it landed right after). */
  async function racing(meanwhile: (e: EndpointRecord) => Promise<unknown>) {
    const shop = await createShop(deps, { name: 'Race Shop', owner_email: 'o@race.test' });
    const made = await createEndpoint({ ...deps, checkUrl }, shop.id, {
      url: 'https://hooks.example.com/x',
      events: ['call.completed'],
    });
    let reads = 0;
    const endpoints = Object.create(deps.endpoints) as ApiDeps['endpoints'];
    endpoints.get = async (shopId, id) => {
      const read = await deps.endpoints.get(shopId, id);
      if (read && ++reads === 1) await meanwhile(read);
      return read;
    };
    return { shop, id: made.id, raced: { ...deps, checkUrl, endpoints } };
  }

  it('a manual disable that crosses the engine disabling it for failures keeps "failing"', async () => {
    const { shop, id, raced } = await racing((e) =>
      deps.endpoints.update(e.shop_id, e.id, { enabled: false, disabled_reason: 'failing' }, new Date().toISOString()),
    );
    const patched = await updateEndpoint(raced, shop.id, id, { enabled: false });
    expect(patched).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  });

  it('an enable that crosses a disable starts afresh: reason cleared, events from now on', async () => {
    let disabledAt = '';
    const { shop, id, raced } = await racing((e) => {
      disabledAt = new Date().toISOString();
      return deps.endpoints.update(e.shop_id, e.id, { enabled: false, disabled_reason: 'failing' }, disabledAt);
    });
    const patched = await updateEndpoint(raced, shop.id, id, { enabled: true });
    expect(patched).toMatchObject({ enabled: true, disabled_reason: null });
    const stored = (await deps.endpoints.get(shop.id, id)) as EndpointRecord;
    // Enabled after the disable: what was created while it was disabled is recover's, not the fan-out's.
    expect(stored.enabled_at >= disabledAt).toBe(true);
    expect(stored.health).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
  });
});
