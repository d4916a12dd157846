import { notFound } from '../errors';
import type { Principal } from './api-keys';
import type { Resource } from './resources';
import type { Shop, ShopDeps } from './shop';

export function lineStatus(shop: Shop): 'active' | 'paused' | 'suspended' {
  if (shop.suspended) return 'suspended';
  return shop.paused ? 'paused' : 'active';
}

/** GET /v1/me: the shop, plan, credits and line of the key's shop, and the key itself. */
export async function getKeyProfile(deps: ShopDeps, principal: Principal): Promise<Resource<'keyProfile'>> {
  const shop = await deps.shops.get(principal.shopId);
  if (!shop) throw notFound('shop', principal.shopId);
  return {
    object: 'key_profile' as const,
    shop: {
      id: shop.id,
      name: shop.name,
      trade: shop.trade,
      timezone: shop.timezone,
      phone_number: shop.phone_number,
    },
    plan: { name: shop.plan.name, included_credits: shop.plan.included_credits },
    credits: { balance: shop.credits.balance, used_this_period: shop.credits.used_this_period },
    line: { status: lineStatus(shop), phone_number: shop.phone_number },
    key: {
      id: principal.keyId,
      mode: principal.mode,
      scopes: principal.scopes,
      write: principal.write,
      created_at: principal.keyCreatedAt,
    },
  };
}
