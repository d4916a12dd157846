import { issueKey, type ApiKeyStore } from '../../shared/domain/api-keys';
import { createShop, type Shop, type ShopStore } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';

export interface DemoSeed {
  shop: Shop;
  writeKey: { id: string; key: string };
  readKey: { id: string; key: string };
}

/** A demo shop with a full write key and a read-only key (every scope, no writes). */
export async function seedDemo(deps: { shops: ShopStore; apiKeys: ApiKeyStore }): Promise<DemoSeed> {
  const shop = await createShop(deps, { name: 'Demo Plumbing Co', owner_email: 'owner@demo-plumbing.test' });
  const write = await issueKey(deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: true, mode: 'test' });
  const read = await issueKey(deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: false, mode: 'test' });
  return {
    shop,
    writeKey: { id: write.record.id, key: write.key },
    readKey: { id: read.record.id, key: read.key },
  };
}
