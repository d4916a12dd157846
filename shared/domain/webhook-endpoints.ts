import { AppError, notFound } from '../errors';
import { logger } from '../logger';
import { newId } from '../ids';
import { findExisting } from './lookup';
import type { GuardPolicy, GuardResult } from '../delivery/url-guard';
import { newEvent, toEventResource, type EventRecord } from './events';
import type { Resource } from './resources';
import { newSigningSecret, type SecretCipher } from './secrets';
import type { CreateEndpointInput, EndpointOrdering, UpdateEndpointInput } from './webhook-endpoints-schema';
import { isOwnWrite, type WriteOptions } from './writes';
import type { EventFilter } from './event-filter-schema';
import { raisesRate } from '../delivery/rate-window';
import { HEALTHY, toHealthResource, type EndpointHealth, type Lease } from '../delivery/circuit';

export const MAX_ENDPOINTS_PER_SHOP = 16;

export interface StoredSecret {
  ciphertext: string;
  created_at: string;
  /** null for the current secret; set for the previous one during its rotation grace. */
  expires_at: string | null;
}

export interface EndpointRecord {
  id: string;
  shop_id: string;
  url: string;
  description: string | null;
  events: string[];
  /** Only events matching it are sent (./event-filter.ts); null: all of its types. */
  filter: EventFilter | null;
  /**
   * `per_resource`: deliveries created while it is set follow their resource's order
   * (../delivery/resource-order.ts).
   */
  ordering: EndpointOrdering;
  /** Requests per second (../delivery/rate-window.ts); null: no rate limit. */
  rate_limit: number | null;
  enabled: boolean;
  disabled_reason: 'manual' | 'failing' | 'gone' | null;
  failing_since: string | null;
  created_at: string;
  /**
   * When it was last enabled (its creation, or an enable after a disable): the fan-out sends it only
   * events created since, and what it missed while disabled is recover's (../delivery/fan-out.ts).
   */
  enabled_at: string;
  updated_at: string;
  secrets: StoredSecret[];
  secrets_version: number;
  /** The circuit and counters the API shows as `health`. */
  health: EndpointHealth;
  /** Requests in flight to the endpoint, by delivery id (see shared/delivery/circuit.ts). */
  leases: Record<string, Lease>;
  lease_version: number;
  /** The last errors before the endpoint was disabled, for the owner's email. */
  last_errors?: string[];
  /** Set while deliveries wait on the queue for a slot: the next success pulls due ones from the table (internal). */
  backlog_at?: string;
  /** Request starts the rate limit counts, by 10 ms bucket (internal; ../delivery/rate-window.ts). */
  rate_starts?: Record<string, number>;
  /** The last place promised to a delivery waiting for the rate (internal, epoch ms). */
  rate_tail?: number | null;
  /** Deliveries batches' runs carry, until when (internal; ../delivery/circuit.ts). */
  carried?: Record<string, number>;
  /**
   * The write token of the request that created it (internal): a retry of that request gets this
   * endpoint, not a second one.
   */
  created_by?: string;
  /**
   * The counters of the stats bucket its state item holds, as read (internal): releases add to
   * them, and a release in a later bucket moves them to the bucket's own item first. Absent on
   * a record not read with its state item (one being made, or a read that missed the item).
   */
  stats?: EndpointStatsState;
}

/** The current stats bucket's counters kept on the endpoint's state item (bucket null: none begun). */
export interface EndpointStatsState {
  bucket: string | null;
  attempts: number;
  succeeded: number;
  failed: number;
  deliveries_failed: number;
  latency: Record<number, number>;
}

/** What an update conditioned on a read compares (`EndpointStore.update`). */
export type EndpointVersion = Pick<EndpointRecord, 'updated_at' | 'enabled'>;

export type EndpointChanges = Partial<
  Pick<
    EndpointRecord,
    | 'url'
    | 'description'
    | 'events'
    | 'filter'
    | 'ordering'
    | 'rate_limit'
    | 'enabled'
    | 'enabled_at'
    | 'disabled_reason'
    | 'failing_since'
    | 'health'
  >
> & {
  /**
   * The rate limit was raised or removed: the line of the old one ends, and what waits in it is
   * woken (../delivery/rate-raise.ts).
   */
  rate_raised?: boolean;
};

export interface EndpointStore {
  create(endpoint: EndpointRecord, maxPerShop: number): Promise<'created' | 'limit_reached' | 'shop_missing'>;
  list(shopId: string): Promise<EndpointRecord[]>;
  get(shopId: string, id: string): Promise<EndpointRecord | null>;
  /**
   * Writes the changes; with `read`, only if the endpoint is still as read (its `updated_at`, and `enabled`,
   * which the engine's disable changes). Null when it is gone, or changed since.
   */
  update(
    shopId: string,
    id: string,
    changes: EndpointChanges,
    updatedAt: string,
    read?: EndpointVersion,
  ): Promise<EndpointRecord | null>;
  /** Replaces the secrets only if nobody rotated since `expectedVersion`; null on a lost race. */
  replaceSecrets(
    endpoint: EndpointRecord,
    secrets: StoredSecret[],
    expectedVersion: number,
    updatedAt: string,
  ): Promise<EndpointRecord | null>;
  /** Deletes the endpoint and frees its place under the cap; false when it was not there. */
  delete(shopId: string, id: string): Promise<boolean>;
}

export interface EventWriter {
  put(event: EventRecord): Promise<void>;
}

export interface EndpointDeps {
  endpoints: EndpointStore;
  /** An endpoint disabled by hand has its open deliveries cancelled at once, as one disabled by failure does. */
  deliveries: QueuedDeliveries;
  events: EventWriter;
  cipher: SecretCipher;
  /** Runs the URL guard, DNS included (injectable for tests). */
  checkUrl: (url: string, policy: GuardPolicy) => Promise<GuardResult>;
  policy: GuardPolicy;
  rotationGraceMs: number;
  now: () => Date;
}

export function toEndpointResource(e: EndpointRecord): Resource<'webhookEndpoint'> {
  return {
    id: e.id,
    object: 'webhook_endpoint' as const,
    url: e.url,
    description: e.description,
    events: e.events,
    filter: e.filter,
    ordering: e.ordering,
    rate_limit: e.rate_limit,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    failing_since: e.failing_since,
    health: toHealthResource(e.health, e.enabled),
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

/** The additional authenticated data binding a secret's ciphertext to its endpoint. */
export const secretContext = (shopId: string, endpointId: string) => `webhook_endpoint:${shopId}:${endpointId}`;

async function guardedUrl(deps: Pick<EndpointDeps, 'checkUrl' | 'policy'>, url: string): Promise<string> {
  const verdict = await deps.checkUrl(url, deps.policy);
  if (!verdict.ok) throw new AppError('parameter_invalid', `url ${verdict.reason}.`, { param: 'url' });
  return verdict.url.toString();
}

export async function loadEndpoint(
  deps: { endpoints: Pick<EndpointStore, 'get'> },
  shopId: string,
  id: string,
): Promise<EndpointRecord> {
  return findExisting('we', 'webhook endpoint', id, (endpointId) => deps.endpoints.get(shopId, endpointId));
}

export async function createEndpoint(
  deps: Omit<EndpointDeps, 'events' | 'deliveries' | 'rotationGraceMs'>,
  shopId: string,
  input: CreateEndpointInput,
  options: WriteOptions = {},
): Promise<Resource<'webhookEndpointWithSecret'>> {
  const url = await guardedUrl(deps, input.url);
  // A retry of a create whose answer was lost (a 5xx after the endpoint was made): the same
  // endpoint and its secret, not a second endpoint; as a replay would, never a rotated secret.
  const made = options.writeToken
    ? (await deps.endpoints.list(shopId)).find((e) => isOwnWrite(options, e.created_by, e.created_at, deps.now()))
    : undefined;
  if (made) {
    const [first] = made.secrets;
    if (made.secrets_version !== 1 || !first) throw secretNotShownAgain(made.id);
    return {
      ...toEndpointResource(made),
      secret: await deps.cipher.decrypt(first.ciphertext, secretContext(shopId, made.id), shopId),
    };
  }
  const now = deps.now();
  const id = newId('we', now.getTime());
  const secret = newSigningSecret();
  const endpoint: EndpointRecord = {
    id,
    shop_id: shopId,
    url,
    description: input.description ?? null,
    events: input.events,
    filter: input.filter ?? null,
    ordering: input.ordering ?? 'none',
    rate_limit: input.rate_limit ?? null,
    enabled: true,
    disabled_reason: null,
    failing_since: null,
    created_at: now.toISOString(),
    enabled_at: now.toISOString(),
    updated_at: now.toISOString(),
    secrets: [
      {
        ciphertext: await deps.cipher.encrypt(secret, secretContext(shopId, id), shopId),
        created_at: now.toISOString(),
        expires_at: null,
      },
    ],
    secrets_version: 1,
    health: HEALTHY,
    leases: {},
    lease_version: 0,
    ...(options.writeToken ? { created_by: options.writeToken } : {}),
  };
  const outcome = await deps.endpoints.create(endpoint, MAX_ENDPOINTS_PER_SHOP);
  if (outcome === 'shop_missing') throw notFound('shop', shopId);
  if (outcome === 'limit_reached') {
    throw new AppError('parameter_invalid', `A shop can have at most ${MAX_ENDPOINTS_PER_SHOP} webhook endpoints.`);
  }
  return { ...toEndpointResource(endpoint), secret };
}

export async function listEndpoints(deps: Pick<EndpointDeps, 'endpoints'>, shopId: string) {
  const endpoints = await deps.endpoints.list(shopId);
  return { items: endpoints.map(toEndpointResource) };
}

export async function updateEndpoint(
  deps: Pick<EndpointDeps, 'endpoints' | 'deliveries' | 'checkUrl' | 'policy' | 'now'>,
  shopId: string,
  id: string,
  input: UpdateEndpointInput,
) {
  let endpoint = await loadEndpoint(deps, shopId, id);
  const url = input.url === undefined ? undefined : await guardedUrl(deps, input.url);
  // What it changes depends on the endpoint as read (enabled, its rate): written only over that read, or read
  // again, so a disable by the engine or another PATCH in between is not overwritten with a stale derivation.
  for (let tries = 1; ; tries++) {
    const now = deps.now();
    const changes = changesOf(endpoint, input, url, now);
    if (Object.keys(changes).length === 0) return toEndpointResource(endpoint);
    const updated = await deps.endpoints.update(shopId, endpoint.id, changes, now.toISOString(), endpoint);
    if (updated) {
      // "Deliveries still queued for a disabled endpoint become cancelled": now, not as each falls due.
      // Also when it was disabled already (a crash after an earlier disable may have left some open).
      if (input.enabled === false && !updated.enabled) await cancelQueued(deps, updated, now);
      return toEndpointResource(updated);
    }
    if (tries === MAX_UPDATE_TRIES)
      throw new AppError('version_conflict', 'The webhook endpoint is being changed concurrently; retry.');
    endpoint = await loadEndpoint(deps, shopId, id);
  }
}

/** Each lost race means another write landed: a few tries always suffice short of a write storm. */
const MAX_UPDATE_TRIES = 5;

function changesOf(endpoint: EndpointRecord, input: UpdateEndpointInput, url: string | undefined, now: Date) {
  const changes: EndpointChanges = {};
  if (url !== undefined) changes.url = url;
  if (input.events !== undefined) changes.events = input.events;
  if (input.description !== undefined) changes.description = input.description;
  if (input.filter !== undefined) changes.filter = input.filter;
  if (input.ordering !== undefined) changes.ordering = input.ordering;
  if (input.rate_limit !== undefined) changes.rate_limit = input.rate_limit;
  if (input.rate_limit !== undefined && raisesRate(endpoint.rate_limit, input.rate_limit)) changes.rate_raised = true;
  if (input.enabled === true) Object.assign(changes, { enabled: true, disabled_reason: null, failing_since: null });
  // Re-enabling a disabled endpoint starts afresh: a closed circuit, no failure count, and only events from now on.
  if (input.enabled === true && !endpoint.enabled)
    Object.assign(changes, { health: HEALTHY, enabled_at: now.toISOString() });
  if (input.enabled === false)
    Object.assign(changes, { enabled: false, disabled_reason: endpoint.enabled ? 'manual' : endpoint.disabled_reason });
  return changes;
}

export interface QueuedDeliveries {
  /**
   * Cancels the endpoint's pending and retrying deliveries created up to `before`, as many as
   * `budgetMs` allows (the consumer cancels the rest as each falls due); returns how many.
   */
  cancelOpenForEndpoint(
    shopId: string,
    endpointId: string,
    options: { before: Date; budgetMs?: number },
  ): Promise<number>;
}

/**
 * After an endpoint was disabled or deleted at `at` (written already): cancels its open
 * deliveries, as far as one request's budget goes. Whatever this leaves, by the budget, a
 * failure or a crash, the consumer cancels as each delivery falls due; so a failure here is
 * logged, never the answer to a change that was made. Null when it failed.
 */
export async function cancelQueued(
  deps: { deliveries: QueuedDeliveries },
  endpoint: Pick<EndpointRecord, 'shop_id' | 'id'>,
  at: Date,
): Promise<number | null> {
  try {
    return await deps.deliveries.cancelOpenForEndpoint(endpoint.shop_id, endpoint.id, { before: at });
  } catch (err) {
    logger.warn(
      'Open deliveries of a disabled or deleted endpoint not cancelled now; the consumer cancels each as it falls due',
      { shop_id: endpoint.shop_id, endpoint_id: endpoint.id, error: err as Error },
    );
    return null;
  }
}

/** A create's secret after a rotation: no longer in force, so never shown again (docs/api.md, Idempotency). */
export const secretNotShownAgain = (id: string) =>
  new AppError(
    'invalid_state',
    `The secret this Idempotency-Key made for webhook endpoint '${id}' has been rotated since, ` +
      `so it is not shown again. Rotate the secret to get a new one.`,
  );

/** Secrets that sign at once, the current one included: a fourth rotation within a grace retires the oldest. */
export const MAX_LIVE_SECRETS = 3;

/**
 * New secret first; the current one stays valid for the grace period so receivers can
 * switch verifiers without losing a delivery, and earlier ones keep what is left of theirs
 * (a double click or a retried rotate never cuts a receiver off): at most MAX_LIVE_SECRETS,
 * the newest. Expired ones are dropped.
 */
export async function rotateSecret(
  deps: Pick<EndpointDeps, 'endpoints' | 'cipher' | 'rotationGraceMs' | 'now'>,
  shopId: string,
  id: string,
): Promise<Resource<'webhookEndpointWithSecret'>> {
  let attempted: { ciphertext: string; secret: string } | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    const endpoint = await loadEndpoint(deps, shopId, id);
    // Our rotation landed though its answer was lost (the SDK's retry then met its own write): it
    // stands. Rotating again would drop the secret receivers verify with, without its grace.
    if (attempted && endpoint.secrets[0]?.ciphertext === attempted.ciphertext)
      return { ...toEndpointResource(endpoint), secret: attempted.secret };
    const now = deps.now();
    const secret = newSigningSecret();
    const graceEnd = new Date(now.getTime() + deps.rotationGraceMs).toISOString();
    const earlier = endpoint.secrets
      .filter((s) => s.expires_at === null || Date.parse(s.expires_at) > now.getTime())
      .map((s) => (s.expires_at === null ? { ...s, expires_at: graceEnd } : s));
    const secrets: StoredSecret[] = [
      {
        ciphertext: await deps.cipher.encrypt(secret, secretContext(shopId, endpoint.id), shopId),
        created_at: now.toISOString(),
        expires_at: null,
      },
      ...earlier,
    ].slice(0, MAX_LIVE_SECRETS);
    attempted = { ciphertext: (secrets[0] as StoredSecret).ciphertext, secret };
    const updated = await deps.endpoints.replaceSecrets(endpoint, secrets, endpoint.secrets_version, now.toISOString());
    if (updated) return { ...toEndpointResource(updated), secret };
  }
  throw new AppError('version_conflict', 'The secret was rotated concurrently; retry.');
}

/**
 * Every secret a delivery must be signed with now: the current one, and earlier ones during their
 * grace (newest first).
 */
export async function signingSecrets(
  deps: Pick<EndpointDeps, 'cipher'>,
  endpoint: EndpointRecord,
  now: Date,
): Promise<string[]> {
  const valid = endpoint.secrets.filter((s) => s.expires_at === null || Date.parse(s.expires_at) > now.getTime());
  return Promise.all(
    valid.map((s) => deps.cipher.decrypt(s.ciphertext, secretContext(endpoint.shop_id, endpoint.id), endpoint.shop_id)),
  );
}

/** Queues a `webhook_endpoint.test` event for this one endpoint, whatever its filter. */
export async function sendTestEvent(
  deps: Pick<EndpointDeps, 'endpoints' | 'events' | 'now'>,
  shopId: string,
  id: string,
): Promise<Resource<'event'>> {
  const endpoint = await loadEndpoint(deps, shopId, id);
  // Deliveries to a disabled endpoint are cancelled, so a test would never arrive: say so now.
  if (!endpoint.enabled)
    throw new AppError('invalid_state', `Webhook endpoint '${id}' is disabled; enable it before testing.`);
  const event = newEvent(shopId, 'webhook_endpoint.test', { endpoint_id: endpoint.id }, deps.now(), endpoint.id);
  await deps.events.put(event);
  return toEventResource(event);
}
