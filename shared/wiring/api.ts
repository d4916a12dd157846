import type { Config, CursorConfig } from '../config';
import type { ApiKeyStore } from '../domain/api-keys';
import type { CallDeps } from '../domain/calls';
import type { RedeliverDeps } from '../delivery/redeliver';
import type { EventLogDeps } from '../domain/event-log';
import type { JobDeps } from '../domain/jobs';
import type { SecretCipher } from '../domain/secrets';
import type { ShopDeps } from '../domain/shop';
import type { EndpointDeps } from '../domain/webhook-endpoints';
import type { EndpointPageDeps, LifecycleDeps } from '../domain/endpoint-lifecycle';
import type { RecoveryDeps } from '../delivery/recovery';
import type { PortalSessionStore } from '../domain/portal-sessions';
import { DynamoEndpointStatsStore } from '../delivery/dynamo/endpoint-stats';
import type { IdempotencyDeps } from '../http/idempotency';
import type { CursorDeps } from '../http/list';
import { DynamoApiKeyStore } from '../store/api-keys';
import { DynamoCallStore } from '../store/calls';
import type { Dynamo } from '../store/client';
import { DynamoCurrentDeliveries } from '../delivery/dynamo/current-deliveries';
import { DynamoDeliveryStore } from '../delivery/dynamo/deliveries';
import { DynamoEventStore, putEvent } from '../store/events';
import { DynamoEventFeed } from '../store/event-feed';
import type { FeedDeps } from '../domain/event-feed';
import { SingleTableIdempotencyStore } from '../store/idempotency';
import { DynamoJobStore } from '../store/jobs';
import { DynamoPortalSessionStore } from '../store/portal-sessions';
import { DynamoRecoveryStore } from '../delivery/dynamo/recoveries';
import type { RateLimiter, RateLimits } from '../domain/rate-limits';
import { DynamoRateLimiter } from '../store/rate-limits';
import { DynamoShopStore } from '../store/shops';
import { DynamoEndpointStore } from '../store/webhook-endpoints';
import { readEndpoint } from '../delivery/dynamo/endpoint-state';
import { readEndpointDeliveries } from '../delivery/dynamo/endpoint-deliveries';
import { readEventDeliveries } from '../delivery/dynamo/event-deliveries';
import { secretFromExtension } from '../aws/secrets-extension';
import { ROTATION_GRACE_MS } from '../delivery/policy';
import { checkUrl } from '../delivery/url-guard';
import { cipherOf, dynamoOf } from './clients';
import { memo } from './memo';

/**
 * The parts the API functions (operations, authorizer, ingest) are wired from, each built
 * once per config. A handler names the parts it uses (`lambdaDeps(jobDeps, idempotencyDeps)`),
 * so a function bundles only their clients: KMS only where secrets are encrypted.
 */
const now = () => new Date();

export function apiKeyDeps(config: Config): { apiKeys: ApiKeyStore } {
  return memo(config, apiKeyDeps, () => ({ apiKeys: new DynamoApiKeyStore(dynamoOf(config)) }));
}

/** Per-key and per-address request budgets, in the table so every authorizer instance shares them. */
export function rateLimitDeps(config: Config): { rateLimiter: RateLimiter; rateLimits: RateLimits } {
  return memo(config, rateLimitDeps, () => ({
    rateLimiter: new DynamoRateLimiter(dynamoOf(config)),
    rateLimits: config.rateLimits,
  }));
}

/** Portal sessions: issued and revoked by their operations, recognised by the authorizer. */
export function portalSessionDeps(config: Config): { portalSessions: PortalSessionStore; now: () => Date } {
  return memo(config, portalSessionDeps, () => ({
    portalSessions: new DynamoPortalSessionStore(dynamoOf(config)),
    now,
  }));
}

export function shopDeps(config: Config): Required<ShopDeps> {
  return memo(config, shopDeps, () => ({ shops: new DynamoShopStore(dynamoOf(config)), now }));
}

export function callDeps(config: Config): CallDeps {
  return memo(config, callDeps, () => ({
    calls: new DynamoCallStore(dynamoOf(config)),
    shops: new DynamoShopStore(dynamoOf(config)),
    now,
  }));
}

export function jobDeps(config: Config): JobDeps {
  return memo(config, jobDeps, () => ({ jobs: new DynamoJobStore(dynamoOf(config)), now }));
}

export function endpointDeps(config: Config): Pick<EndpointDeps, 'endpoints' | 'rotationGraceMs' | 'now'> {
  return memo(config, endpointDeps, () => ({
    endpoints: new DynamoEndpointStore(dynamoOf(config)),
    rotationGraceMs: ROTATION_GRACE_MS * config.webhooks.timeScale,
    now,
  }));
}

/** The URL guard, DNS included: where an endpoint's URL is set. */
export function urlGuardDeps(config: Config): Pick<EndpointDeps, 'checkUrl' | 'policy'> {
  return memo(config, urlGuardDeps, () => ({
    checkUrl: (url, policy) => checkUrl(url, policy),
    policy: { allowInsecureLocal: config.webhooks.allowInsecureLocal },
  }));
}

export function eventWriterDeps(config: Config): Pick<EndpointDeps, 'events'> {
  return memo(config, eventWriterDeps, () => ({ events: { put: (event) => putEvent(dynamoOf(config), event) } }));
}

/** Redeliver, and the event pages with it: table only (the API never talks to the queue). */
export function eventLogDeps(config: Config): EventLogDeps & RedeliverDeps {
  return memo(config, eventLogDeps, () => ({
    events: new DynamoEventStore(dynamoOf(config)),
    deliveries: new DynamoDeliveryStore(dynamoOf(config)),
    currentDeliveries: new DynamoCurrentDeliveries(dynamoOf(config)),
    endpoints: new DynamoEndpointStore(dynamoOf(config)),
    timeScale: config.webhooks.timeScale,
    now,
  }));
}

/**
 * The event pages (list, get with its deliveries): the events and the event's delivery rows
 * alone, so their bundles carry none of the delivery stores' writes.
 */
export function eventPageDeps(config: Config): EventLogDeps {
  return memo(config, eventPageDeps, () => {
    const db = dynamoOf(config);
    return {
      events: new DynamoEventStore(db),
      deliveries: { listForEvent: (shopId, eventId) => readEventDeliveries(db, shopId, eventId) },
    };
  });
}

/** The event feed's reads. */
export function eventFeedDeps(config: Config): FeedDeps {
  return memo(config, eventFeedDeps, () => ({ feed: new DynamoEventFeed(dynamoOf(config)), now }));
}

/** An endpoint's own pages (get, delete, deliveries, stats), recover and its recoveries: table only. */
export function endpointLifecycleDeps(config: Config): LifecycleDeps & RecoveryDeps {
  return memo(config, endpointLifecycleDeps, () => ({
    endpoints: new DynamoEndpointStore(dynamoOf(config)),
    deliveries: new DynamoDeliveryStore(dynamoOf(config)),
    currentDeliveries: new DynamoCurrentDeliveries(dynamoOf(config)),
    recoveries: new DynamoRecoveryStore(dynamoOf(config)),
    events: new DynamoEventStore(dynamoOf(config)),
    stats: new DynamoEndpointStatsStore(dynamoOf(config)),
    timeScale: config.webhooks.timeScale,
    now,
  }));
}

/**
 * An endpoint's read-only pages (get, deliveries): the endpoint read and its delivery rows' page
 * alone, so their bundles carry none of the endpoint and delivery stores' writes.
 */
export function endpointPageDeps(config: Config): EndpointPageDeps {
  return memo(config, endpointPageDeps, () => {
    const db = dynamoOf(config);
    return {
      endpoints: { get: (shopId: string, id: string) => readEndpoint(db, shopId, id) },
      deliveries: {
        listForEndpoint: (shopId, endpointId, page, status) =>
          readEndpointDeliveries(db, shopId, endpointId, page, status),
      },
    };
  });
}

/**
 * Recover and its progress: the endpoint read alone, so their bundles carry none of the endpoint
 * and delivery stores' writes.
 */
export function recoveryDeps(config: Config): RecoveryDeps {
  return memo(config, recoveryDeps, () => ({
    endpoints: { get: (shopId: string, id: string) => readEndpoint(dynamoOf(config), shopId, id) },
    currentDeliveries: new DynamoCurrentDeliveries(dynamoOf(config)),
    recoveries: new DynamoRecoveryStore(dynamoOf(config)),
    events: new DynamoEventStore(dynamoOf(config)),
    timeScale: config.webhooks.timeScale,
    now,
  }));
}

export function cipherDeps(config: Config): { cipher: SecretCipher } {
  return memo(config, cipherDeps, () => ({ cipher: cipherOf(config) }));
}

/** Stored responses are sealed with the secrets cipher: one of them carries a signing secret. */
export function idempotencyDeps(config: Config): IdempotencyDeps {
  return memo(config, idempotencyDeps, () => ({
    idempotency: new SingleTableIdempotencyStore(dynamoOf(config), () => cipherOf(config)),
  }));
}

export function cursorDeps(config: Config): CursorDeps {
  return memo(config, cursorDeps, () => {
    let key: Promise<Buffer> | undefined;
    const load = () => loadCursorKey(config.cursor).catch((err: unknown) => ((key = undefined), Promise.reject(err)));
    return { cursorKey: () => (key ??= load()) };
  });
}

/**
 * In AWS the key lives in Secrets Manager, read once per container (through the extension) so it is
 * never a plain environment variable.
 */
async function loadCursorKey(cursor: CursorConfig): Promise<Buffer> {
  const secret = 'secret' in cursor ? cursor.secret : await secretFromExtension(cursor.secretArn, cursor.extension);
  if (!secret || secret.length < 32) throw new Error('the cursor secret must be at least 32 characters');
  return Buffer.from(secret, 'utf8');
}

/** Every API part at once, with the table client: for the local stack, the operator CLI and tests. */
export type ApiDeps = { db: Dynamo } & ReturnType<typeof apiKeyDeps> &
  ReturnType<typeof rateLimitDeps> &
  ReturnType<typeof portalSessionDeps> &
  ReturnType<typeof shopDeps> &
  CallDeps &
  JobDeps &
  ReturnType<typeof endpointDeps> &
  ReturnType<typeof urlGuardDeps> &
  ReturnType<typeof eventWriterDeps> &
  ReturnType<typeof eventLogDeps> &
  ReturnType<typeof eventFeedDeps> &
  ReturnType<typeof endpointLifecycleDeps> &
  ReturnType<typeof cipherDeps> &
  IdempotencyDeps &
  CursorDeps;

export function apiDeps(config: Config): ApiDeps {
  return memo(
    config,
    apiDeps,
    () =>
      Object.assign(
        { db: dynamoOf(config) },
        ...[
          apiKeyDeps,
          rateLimitDeps,
          portalSessionDeps,
          shopDeps,
          callDeps,
          jobDeps,
          endpointDeps,
          urlGuardDeps,
          eventWriterDeps,
          eventLogDeps,
          eventFeedDeps,
          endpointLifecycleDeps,
          cipherDeps,
          idempotencyDeps,
          cursorDeps,
        ].map((part) => part(config)),
      ) as ApiDeps,
  );
}
