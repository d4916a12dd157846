import type { Shop, ShopChanges, ShopStore } from '../../shared/domain/shop';

/** An in-memory ShopStore for tests of the HTTP layer and the domain. */
export class MemoryShopStore implements ShopStore {
  readonly shops = new Map<string, Shop>();
  updates = 0;

  async get(id: string) {
    const shop = this.shops.get(id);
    return shop ? structuredClone(shop) : null;
  }
  async create(shop: Shop) {
    this.shops.set(shop.id, structuredClone(shop));
  }
  async update(id: string, changes: ShopChanges, updatedAt: string) {
    const shop = this.shops.get(id);
    if (!shop) return null;
    this.updates++;
    Object.assign(shop, changes.fields, { updated_at: updatedAt });
    Object.assign(shop.hours, changes.hours);
    return structuredClone(shop);
  }
}
