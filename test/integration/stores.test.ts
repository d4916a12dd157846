import { issueKey } from '../../shared/domain/api-keys';
import { createShop, toChanges } from '../../shared/domain/shop';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { keys } from '../../shared/store/keys';
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
      toChanges({ greeting: 'New', hours: { sat: [{ open: '10:00', close: '12:00' }] }, paused: true, pause_reason: 'Vacation' }),
      '2026-11-21T10:00:00.000Z',
    );
    expect(updated).toMatchObject({ greeting: 'New', paused: true, pause_reason: 'Vacation', updated_at: '2026-11-21T10:00:00.000Z' });
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
    const { record, key } = await issueKey(deps.apiKeys, { shopId: shop.id, scopes: ['calls:read'], write: false, mode: 'live' });
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
});
