import { newId } from '../ids';
import { notFound } from '../errors';
import type { Resource } from './resources';
import type { Hours, ShopPatch } from './shop-schema';
import { WEEKDAYS, type Weekday } from './shop-values';

export type BookingMode = 'auto_book' | 'approval_required' | 'message_only';

export interface Shop {
  id: string;
  name: string;
  greeting: string;
  trade: string;
  timezone: string;
  booking_mode: BookingMode;
  hours: Hours;
  emergency_triggers: string[];
  paused: boolean;
  pause_reason: string | null;
  owner_email: string;
  phone_number: string;
  /** Set by operators only; a suspended line takes no calls. */
  suspended: boolean;
  plan: { name: string; included_credits: number };
  credits: { balance: number; used_this_period: number };
  created_at: string;
  updated_at: string;
  /** Counted by endpoint creation, so concurrent creates cannot pass the per-shop limit; absent until the first. */
  webhook_endpoint_count?: number;
}

/** A validated patch, split the way the store applies it: whole fields, and hours day by day. */
export interface ShopChanges {
  fields: Partial<
    Pick<
      Shop,
      'name' | 'greeting' | 'trade' | 'timezone' | 'booking_mode' | 'emergency_triggers' | 'paused' | 'pause_reason'
    >
  >;
  hours: Partial<Hours>;
}

export interface ShopStore {
  get(shopId: string): Promise<Shop | null>;
  create(shop: Shop): Promise<void>;
  /** Applies the changes atomically and returns the whole shop; null when it does not exist. */
  update(shopId: string, changes: ShopChanges, updatedAt: string): Promise<Shop | null>;
}

export interface ShopDeps {
  shops: ShopStore;
  now?: () => Date;
}

export const PLANS = {
  starter: { name: 'starter', included_credits: 500 },
  pro: { name: 'pro', included_credits: 2000 },
} as const;

/** Weekdays in calendar order and intervals as {open, close}, whatever order the store kept. */
function orderedHours(hours: Hours): Hours {
  return Object.fromEntries(
    WEEKDAYS.map((d) => [d, (hours[d] ?? []).map((iv) => ({ open: iv.open, close: iv.close }))]),
  ) as Hours;
}

export function toShopResource(shop: Shop): Resource<'shop'> {
  return {
    id: shop.id,
    object: 'shop' as const,
    name: shop.name,
    greeting: shop.greeting,
    trade: shop.trade,
    timezone: shop.timezone,
    booking_mode: shop.booking_mode,
    hours: orderedHours(shop.hours),
    emergency_triggers: shop.emergency_triggers,
    paused: shop.paused,
    pause_reason: shop.pause_reason,
    owner_email: shop.owner_email,
    phone_number: shop.phone_number,
    updated_at: shop.updated_at,
  };
}

export async function getShop(deps: ShopDeps, shopId: string) {
  const shop = await deps.shops.get(shopId);
  // A key whose shop is gone is answered like a missing resource, never a 500.
  if (!shop) throw notFound('shop', shopId);
  return toShopResource(shop);
}

export function toChanges(patch: ShopPatch): ShopChanges {
  const { hours, ...fields } = patch;
  // Unpausing clears the reason unless the patch says otherwise (validation forbids a new one).
  if (fields.paused === false && fields.pause_reason === undefined) fields.pause_reason = null;
  return { fields, hours: hours ?? {} };
}

export async function updateShop(deps: ShopDeps, shopId: string, patch: ShopPatch) {
  const changes = toChanges(patch);
  const nothingToChange = Object.keys(changes.fields).length === 0 && Object.keys(changes.hours).length === 0;
  if (nothingToChange) return getShop(deps, shopId);
  const now = (deps.now ?? (() => new Date()))();
  const shop = await deps.shops.update(shopId, changes, now.toISOString());
  if (!shop) throw notFound('shop', shopId);
  return toShopResource(shop);
}

export interface NewShopInput {
  name: string;
  owner_email: string;
  timezone?: string;
  trade?: string;
  phone_number?: string;
  plan?: keyof typeof PLANS;
}

const WEEKDAY_HOURS = [{ open: '08:00', close: '17:00' }];

export function defaultHours(): Hours {
  return Object.fromEntries(
    WEEKDAYS.map((d: Weekday) => [d, d === 'sat' || d === 'sun' ? [] : WEEKDAY_HOURS.map((iv) => ({ ...iv }))]),
  ) as Hours;
}

/** A fictional but well-formed North American number (555-01xx is reserved for fiction). */
export function fictionalPhoneNumber(): string {
  return `+1415555010${Math.floor(Math.random() * 10)}`;
}

export async function createShop(deps: ShopDeps, input: NewShopInput): Promise<Shop> {
  const now = (deps.now ?? (() => new Date()))();
  const plan = PLANS[input.plan ?? 'starter'];
  const shop: Shop = {
    id: newId('shop', now.getTime()),
    name: input.name,
    greeting: `Thanks for calling ${input.name}. How can we help you today?`,
    trade: input.trade ?? 'plumbing',
    timezone: input.timezone ?? 'America/New_York',
    booking_mode: 'approval_required',
    hours: defaultHours(),
    emergency_triggers: ['burst pipe', 'flooding', 'gas smell', 'no heat', 'sparking outlet'],
    paused: false,
    pause_reason: null,
    owner_email: input.owner_email,
    phone_number: input.phone_number ?? fictionalPhoneNumber(),
    suspended: false,
    plan: { ...plan },
    credits: { balance: plan.included_credits, used_this_period: 0 },
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
  await deps.shops.create(shop);
  return shop;
}
