import type { EventFilter } from '../../shared/domain/event-filter-schema';
import { createShop } from '../../shared/domain/shop';
import { toEndpointResource, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import { keys } from '../../shared/store/keys';
import type { ApiDeps } from '../../shared/wiring/api';
import { HEALTHY } from '../../shared/delivery/circuit';
import { useFreshTable } from '../helpers/table';

describe("an endpoint's filter in the table (DynamoDB Local)", () => {
  let deps: ApiDeps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });

  const rawItem = async (e: EndpointRecord) =>
    (
      await deps.db.doc.get({
        TableName: deps.db.tableName,
        Key: keys.webhookEndpoint(e.shop_id, e.id),
        ConsistentRead: true,
      })
    ).Item ?? {};

  it('is kept as its JSON text and read back as it was written; null clears it', async () => {
    const shop = await createShop(deps, { name: 'Filter Store Shop', owner_email: 'o@filter-store.test' });
    const at = '2026-11-22T10:00:00.000Z';
    // A number DynamoDB could not give back as a JavaScript number, were the filter a map.
    const filter: EventFilter = {
      $or: [
        { 'data.outcome': { $in: ['job_created', 'emergency_escalated'] } },
        { 'data.duration_seconds': { $gt: 2 ** 60 } },
      ],
      'data.caller_name': null,
    };
    const endpoint: EndpointRecord = {
      id: newId('we', Date.parse(at)),
      shop_id: shop.id,
      url: 'https://hooks.example.test/in',
      description: null,
      events: ['call.completed'],
      filter,
      ordering: 'none',
      rate_limit: null,
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      created_at: at,
      enabled_at: at,
      updated_at: at,
      secrets: [],
      secrets_version: 1,
      health: HEALTHY,
      leases: {},
      lease_version: 0,
    };
    expect(await deps.endpoints.create(endpoint, 16)).toBe('created');
    expect((await rawItem(endpoint)).filter).toBe(JSON.stringify(filter));
    expect((await deps.endpoints.get(shop.id, endpoint.id))?.filter).toEqual(filter);
    expect((await deps.endpoints.list(shop.id)).map((e) => toEndpointResource(e).filter)).toEqual([filter]);

    const cleared = await deps.endpoints.update(shop.id, endpoint.id, { filter: null }, at);
    expect(cleared?.filter).toBeNull();
    expect((await deps.endpoints.get(shop.id, endpoint.id))?.filter).toBeNull();
    const set = await deps.endpoints.update(shop.id, endpoint.id, { filter: { 'data.outcome': 'spam' } }, at);
    expect(set?.filter).toEqual({ 'data.outcome': 'spam' });
    // Other changes leave it alone.
    expect((await deps.endpoints.update(shop.id, endpoint.id, { description: 'CRM' }, at))?.filter).toEqual({
      'data.outcome': 'spam',
    });
  });
});
