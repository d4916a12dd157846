import { configFromEnv } from '../../shared/config';
import { newEvent } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { getRecovery, recoverEndpoint } from '../../shared/delivery/recovery';
import { carriedKey } from '../../shared/delivery/circuit';
import { breakLeasesOfLastRun } from '../../lib/local/leases';
import { ensureTable } from '../../lib/local/dynamodb-local';
import { keys } from '../../shared/store/keys';
import { apiDeps, endpointPageDeps, eventPageDeps, recoveryDeps } from '../../shared/wiring/api';
import { getEvent, listEvents } from '../../shared/domain/event-log';
import { getEndpoint, listEndpointDeliveries } from '../../shared/domain/endpoint-lifecycle';
import { testEndpoint, uniqueTableName } from '../helpers/table';

/**
 * The production wiring of recover, of an endpoint's read-only pages and of the event pages (the
 * reads alone) and the local start's lease break, on DynamoDB Local.
 */
describe("recover's own wiring and the local start's clean-up (DynamoDB Local)", () => {
  const tableName = uniqueTableName();
  const config = configFromEnv({ ...process.env, DYNAMODB_ENDPOINT: testEndpoint(), TABLE_NAME: tableName });
  beforeAll(() => ensureTable(testEndpoint(), tableName));

  async function endpointWithMissedEvent() {
    const deps = apiDeps(config);
    const shop = await createShop(deps, { name: 'Lean Shop', owner_email: 'o@lean.test' });
    const made = new Date(Date.now() - 120_000);
    const endpoint = await createEndpoint(
      { ...deps, now: () => made, checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }) },
      shop.id,
      { url: 'https://hooks.example.com/lean', events: ['call.completed'] },
    );
    await deps.events.put(
      newEvent(shop.id, 'call.completed', { id: 'call_1', object: 'call' }, new Date(Date.now() - 60_000)),
    );
    return { deps, shopId: shop.id, endpointId: endpoint.id };
  }

  it(
    "recoverWebhookEndpoint's wiring finds the endpoint, queues the missed event and shows the recovery; " +
      'an unknown endpoint is a 404',
    async () => {
      const { shopId, endpointId } = await endpointWithMissedEvent();
      const deps = recoveryDeps(config);
      const answer = await recoverEndpoint(deps, shopId, endpointId, {
        since: new Date(Date.now() - 3_600_000).toISOString(),
      });
      expect(answer).toMatchObject({ status: 'completed', deliveries_queued: 1 });
      expect(await getRecovery(deps, shopId, endpointId, answer.id)).toEqual(answer);
      await expect(
        recoverEndpoint(deps, shopId, 'we_01jd0000000000000000000000', {
          since: new Date(Date.now() - 3_600_000).toISOString(),
        }),
      ).rejects.toMatchObject({ code: 'resource_missing' });
    },
  );

  it(
    "an endpoint's read-only pages' wiring reads the endpoint and a page of its deliveries; " +
      'an unknown endpoint is a 404',
    async () => {
      const { deps: full, shopId, endpointId } = await endpointWithMissedEvent();
      await recoverEndpoint(recoveryDeps(config), shopId, endpointId, {
        since: new Date(Date.now() - 3_600_000).toISOString(),
      });
      const deps = endpointPageDeps(config);
      expect(await getEndpoint(deps, shopId, endpointId)).toEqual(await getEndpoint(full, shopId, endpointId));
      const page = await listEndpointDeliveries(deps, shopId, endpointId, { limit: 10 });
      expect(page).toEqual(await listEndpointDeliveries(full, shopId, endpointId, { limit: 10 }));
      expect(page.items).toMatchObject([{ endpoint_id: endpointId, status: 'pending' }]);
      expect(await listEndpointDeliveries(deps, shopId, endpointId, { limit: 10 }, 'succeeded')).toEqual({
        items: [],
        next: undefined,
      });
      await expect(getEndpoint(deps, shopId, 'we_01jd0000000000000000000000')).rejects.toMatchObject({
        code: 'resource_missing',
      });
    },
  );

  it("the event pages' wiring lists events and reads one with its deliveries, as the full wiring does", async () => {
    const { deps: full, shopId, endpointId } = await endpointWithMissedEvent();
    await recoverEndpoint(recoveryDeps(config), shopId, endpointId, {
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    const deps = eventPageDeps(config);
    const page = await listEvents(deps, shopId, { limit: 10 });
    expect(page).toEqual(await listEvents(full, shopId, { limit: 10 }));
    const [event] = page.items;
    const read = await getEvent(deps, shopId, String(event?.id));
    expect(read).toEqual(await getEvent(full, shopId, String(event?.id)));
    expect(read.deliveries).toMatchObject([{ endpoint_id: endpointId, status: 'pending' }]);
    await expect(getEvent(deps, shopId, 'evt_01jd0000000000000000000000')).rejects.toMatchObject({
      code: 'resource_missing',
    });
  });

  it(
    "a local start ends the last run's leases and what its batches carried, " + 'and leaves a quiet endpoint alone',
    async () => {
      const { deps, shopId, endpointId } = await endpointWithMissedEvent();
      const quiet = await endpointWithMissedEvent();
      const key = keys.endpointState(shopId, endpointId);
      await deps.db.doc.update({
        TableName: deps.db.tableName,
        Key: key,
        UpdateExpression: 'SET leases.#d = :lease, #c = :until',
        ExpressionAttributeNames: {
          '#d': 'dlv_01jd0000000000000000000001',
          '#c': carriedKey('dlv_01jd0000000000000000000002'),
        },
        ExpressionAttributeValues: {
          ':lease': { until: Date.now() + 60_000, token: 't', probe: false },
          ':until': Date.now() + 60_000,
        },
      });
      const quietBefore = (
        await deps.db.doc.get({
          TableName: deps.db.tableName,
          Key: keys.endpointState(quiet.shopId, quiet.endpointId),
          ConsistentRead: true,
        })
      ).Item;
      expect(await breakLeasesOfLastRun(deps.db)).toBe(1);
      const after =
        (await deps.db.doc.get({ TableName: deps.db.tableName, Key: key, ConsistentRead: true })).Item ?? {};
      expect(after.leases).toEqual({});
      expect(Object.keys(after).filter((k) => k.startsWith('c_'))).toEqual([]);
      expect(
        (
          await deps.db.doc.get({
            TableName: deps.db.tableName,
            Key: keys.endpointState(quiet.shopId, quiet.endpointId),
            ConsistentRead: true,
          })
        ).Item,
      ).toEqual(quietBefore);
      expect(await breakLeasesOfLastRun(deps.db)).toBe(0);
    },
  );
});
