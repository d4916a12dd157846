import { issueKey } from '../../shared/domain/api-keys';
import { createShop, toChanges } from '../../shared/domain/shop';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { keys } from '../../shared/store/keys';
import { newDelivery } from '../../shared/delivery/fan-out';
import { type DeliveryRecord, type DeliveryRef } from '../../shared/delivery/records';
import { newEvent } from '../../shared/domain/events';
import { newId } from '../../shared/ids';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { createEndpoint, updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { useFreshTable } from '../helpers/table';

describe('DynamoDB adapters (DynamoDB Local)', () => {
  let deps: Deps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });

  it('creates, reads and patches a shop; hours merge day by day', async () => {
    const shop = await createShop(deps, { name: 'Store Shop', owner_email: 'o@store.test', timezone: 'Europe/London' });
    expect(await deps.shops.get(shop.id)).toMatchObject({ name: 'Store Shop', timezone: 'Europe/London' });
    const updated = await deps.shops.update(
      shop.id,
      toChanges({
        greeting: 'New',
        hours: { sat: [{ open: '10:00', close: '12:00' }] },
        paused: true,
        pause_reason: 'Vacation',
      }),
      '2026-11-21T10:00:00.000Z',
    );
    expect(updated).toMatchObject({
      greeting: 'New',
      paused: true,
      pause_reason: 'Vacation',
      updated_at: '2026-11-21T10:00:00.000Z',
    });
    expect(updated?.hours.sat).toEqual([{ open: '10:00', close: '12:00' }]);
    expect(updated?.hours.mon).toEqual([{ open: '08:00', close: '17:00' }]);
    const unpaused = await deps.shops.update(shop.id, toChanges({ paused: false }), '2026-11-21T11:00:00.000Z');
    expect(unpaused).toMatchObject({ paused: false, pause_reason: null });
  });

  it('does not create a shop when patching one that does not exist', async () => {
    expect(await deps.shops.update('shop_01jd0000000000000000000000', toChanges({ greeting: 'x' }), 'now')).toBeNull();
    expect(await deps.shops.get('shop_01jd0000000000000000000000')).toBeNull();
  });

  it('stores keys only as hashes and revokes them by id, once', async () => {
    const shop = await createShop(deps, { name: 'Key Shop', owner_email: 'o@key.test' });
    const { record, key } = await issueKey(deps.apiKeys, {
      shopId: shop.id,
      scopes: ['calls:read'],
      write: false,
      mode: 'live',
    });
    expect(key).toMatch(/^sk_live_/);
    const scan = await deps.db.doc.scan({ TableName: deps.db.tableName });
    expect(JSON.stringify(scan.Items)).not.toContain(key);
    expect(scan.Items?.find((i) => i.pk === keys.apiKey(record.key_hash).pk)).toBeDefined();

    const first = await deps.apiKeys.revoke(record.id, '2026-11-21T10:00:00.000Z');
    const second = await deps.apiKeys.revoke(record.id, '2026-11-22T10:00:00.000Z');
    expect(first).toMatchObject({ revoked: true, revoked_at: '2026-11-21T10:00:00.000Z' });
    expect(second?.revoked_at).toBe('2026-11-21T10:00:00.000Z');
    expect(await deps.apiKeys.getByHash(record.key_hash)).toMatchObject({ revoked: true });
    expect(await deps.apiKeys.revoke('key_01jd0000000000000000000000', 'now')).toBeNull();
  });

  describe("cancelling an endpoint's open deliveries", () => {
    // Off the fast path (put off, retrying, held): in the endpoint's open deliveries (GSI1).
    const indexed = (d: DeliveryRecord): DeliveryRecord => ({
      ...d,
      sweep_at: new Date(Date.parse(d.created_at) + 60_000).toISOString(),
    });
    const openRows = async (n: number) => {
      const shop = await createShop(deps, { name: 'Cancel Shop', owner_email: 'o@cancel.test' });
      const endpointId = newId('we');
      const now = new Date();
      const rows = Array.from({ length: n }, (_, i) =>
        newDelivery(newEvent(shop.id, 'call.completed', { id: `call_${i}`, object: 'call' }, now), {
          id: newId('dlv'),
          endpointId,
          origin: 'fanout',
          now,
        }),
      ).map(indexed);
      await new DynamoDeliveryStore(deps.db).createAll(rows);
      return { shopId: shop.id, endpointId, rows };
    };

    it("cancels every one created up to the disable, and only that endpoint's; later ones are left to the consumer", async () => {
      const store = new DynamoDeliveryStore(deps.db);
      const a = await openRows(40);
      const b = await openRows(3);
      const disabledAt = new Date();
      // Written after the disable (by a fan-out that read the endpoint still enabled, or after a re-enable).
      const later = new Date(disabledAt.getTime() + 1);
      const late = indexed(
        newDelivery(newEvent(a.shopId, 'call.completed', { id: 'call_late', object: 'call' }, later), {
          id: newId('dlv'),
          endpointId: a.endpointId,
          origin: 'fanout',
          now: later,
        }),
      );
      // On its fast path (its message on the queue): in no index, so the consumer cancels it when it meets it.
      const fast = newDelivery(newEvent(a.shopId, 'call.completed', { id: 'call_fast', object: 'call' }, disabledAt), {
        id: newId('dlv', disabledAt.getTime()),
        endpointId: a.endpointId,
        origin: 'fanout',
        now: new Date(disabledAt.getTime() - 1),
      });
      await store.createAll([late, fast]);
      expect(await store.cancelOpenForEndpoint(a.shopId, a.endpointId, { before: disabledAt })).toBe(40);
      // The fast-path row is counted all the same (the endpoint's recent pending rows).
      expect(await store.countOpenForEndpoint(a.shopId, a.endpointId, new Date())).toEqual({ pending: 2, retrying: 0 });
      expect(await store.get(fast)).toMatchObject({ status: 'pending', sweep_at: null });
      expect(await store.get(late)).toMatchObject({ status: 'pending' });
      const row = await store.get(a.rows[7] as DeliveryRecord);
      expect(row).toMatchObject({ status: 'cancelled', next_attempt_at: null });
      expect(await store.countOpenForEndpoint(b.shopId, b.endpointId, new Date())).toEqual({ pending: 3, retrying: 0 });
      expect(await store.cancelOpenForEndpoint(a.shopId, a.endpointId, { before: disabledAt })).toBe(0);
    });

    it('starts no write after its budget, 16 at a time: the rest stay open for the consumer to cancel', async () => {
      // Each cancel takes 400 ms here: with a 1 s budget, a few waves of 16 start, not the 7 that 100 rows need.
      const slow = new DynamoDeliveryStore(deps.db);
      const cancel = slow.cancel.bind(slow);
      let inFlight = 0;
      let most = 0;
      slow.cancel = async (d: DeliveryRef) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 400));
        const done = await cancel(d);
        inFlight--;
        return done;
      };
      const { shopId, endpointId } = await openRows(100);
      const before = new Date();
      const cancelled = await slow.cancelOpenForEndpoint(shopId, endpointId, { before, budgetMs: 1_000 });
      expect(most).toBe(16);
      expect(cancelled).toBeGreaterThanOrEqual(16);
      expect(cancelled).toBeLessThan(100);
      expect(await slow.countOpenForEndpoint(shopId, endpointId, new Date())).toEqual({
        pending: 100 - cancelled,
        retrying: 0,
      });
      expect(await slow.cancelOpenForEndpoint(shopId, endpointId, { before, budgetMs: 0 })).toBe(0);
    });

    it('stops at the first failed write and throws it once the writes under way have ended', async () => {
      const failing = new DynamoDeliveryStore(deps.db);
      const cancel = failing.cancel.bind(failing);
      let calls = 0;
      failing.cancel = async (d: DeliveryRef) => {
        if (++calls === 3) throw new Error('throttled');
        return cancel(d);
      };
      const { shopId, endpointId } = await openRows(60);
      await expect(failing.cancelOpenForEndpoint(shopId, endpointId, { before: new Date() })).rejects.toThrow(
        'throttled',
      );
      // The 16 workers each stop once the failure is seen: far fewer than 60 writes were started.
      expect(calls).toBeLessThan(40);
      expect((await failing.countOpenForEndpoint(shopId, endpointId, new Date())).pending).toBeGreaterThan(20);
    });

    it('a manual disable answers with the disabled endpoint even when cancelling fails; a PATCH that does not disable cancels nothing', async () => {
      const shop = await createShop(deps, { name: 'Disable Shop', owner_email: 'o@disable.test' });
      const created = await createEndpoint(deps, shop.id, {
        url: 'https://hooks.partner.example/disable',
        events: ['*'],
        description: null,
      } as never);
      let calls = 0;
      const failing = {
        ...deps,
        deliveries: { cancelOpenForEndpoint: () => (calls++, Promise.reject(new Error('store down'))) },
      };
      expect(await updateEndpoint(failing, shop.id, created.id, { enabled: false })).toMatchObject({
        id: created.id,
        enabled: false,
        disabled_reason: 'manual',
      });
      expect(calls).toBe(1);
      expect(await updateEndpoint(failing, shop.id, created.id, { description: 'still off' })).toMatchObject({
        enabled: false,
        description: 'still off',
      });
      expect(calls).toBe(1);
    });
  });
});
