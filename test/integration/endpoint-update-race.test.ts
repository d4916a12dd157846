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

  /**
   * The engine disabling it for failures, as its write may land: the circuit open, and stamped with the time of
   * the attempt that disabled it, which can be the very `updated_at` the PATCH read.
   */
  const engineDisables = (e: EndpointRecord) =>
    deps.endpoints.update(
      e.shop_id,
      e.id,
      {
        enabled: false,
        disabled_reason: 'failing',
        health: { ...e.health, circuit: 'open', consecutive_failures: 5 },
      },
      e.updated_at,
    );

  it('a manual disable that crosses the engine disabling it for failures keeps "failing"', async () => {
    const { shop, id, raced } = await racing(engineDisables);
    const patched = await updateEndpoint(raced, shop.id, id, { enabled: false });
    expect(patched).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  });

  it('an enable that crosses a disable starts afresh: reason cleared, circuit closed, events from now on', async () => {
    let disabledAt = '';
    const { shop, id, raced } = await racing((e) => {
      disabledAt = new Date().toISOString();
      return engineDisables(e);
    });
    const patched = await updateEndpoint(raced, shop.id, id, { enabled: true });
    expect(patched).toMatchObject({ enabled: true, disabled_reason: null });
    const stored = (await deps.endpoints.get(shop.id, id)) as EndpointRecord;
    // Enabled after the disable: what was created while it was disabled is recover's, not the fan-out's.
    expect(stored.enabled_at >= disabledAt).toBe(true);
    expect(stored.health).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
  });

  it('an enable of an endpoint that is enabled changes neither its health nor when it was enabled', async () => {
    const { shop, id, raced } = await racing(async () => undefined);
    const before = (await deps.endpoints.get(shop.id, id)) as EndpointRecord;
    expect(await updateEndpoint(raced, shop.id, id, { enabled: true })).toMatchObject({ enabled: true });
    const after = (await deps.endpoints.get(shop.id, id)) as EndpointRecord;
    expect(after.enabled_at).toBe(before.enabled_at);
    expect(after.health).toEqual(before.health);
  });
});
