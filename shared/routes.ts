/**
 * THE route table. CDK (one function per route), the local HTTP adapter, the scope and
 * write-key checks and the fallback (404/405/501) all read it. To find an operation's
 * code, follow `handler`: it is the file, relative to the repository root.
 */
import { EVENT_TYPE_CATALOG_FILE } from './domain/event-catalog';
import type { Scope } from './domain/scopes';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface Route {
  operationId: string;
  method: HttpMethod;
  /** API Gateway route syntax: `{name}` is a path parameter. */
  path: string;
  /**
   * The scopes that allow it: a key needs any one of them (none listed: any valid key). The last is
   * the one a refusal names.
   */
  scopes: readonly Scope[];
  /** Needs a write key (every POST, PATCH and DELETE). */
  write: boolean;
  /** Accepts an Idempotency-Key header. */
  idempotent: boolean;
  /**
   * A portal session's token may call it (docs/api.md, Portal sessions): the webhook
   * endpoint operations, the event reads and redeliver; a read-only session, their GETs only.
   */
  portalSession: boolean;
  /** Handler file; `null` while the operation is not built (the fallback answers 501). */
  handler: string | null;
  /**
   * Keys the handler uses besides the table: `cipher` (KMS: webhook secrets, and the stored
   * responses of idempotent operations), `cursor` (the HMAC key of list cursors).
   */
  secrets: ('cipher' | 'cursor')[];
  /**
   * Files (relative to the repository root) the handler reads at run time: each deploy copies them
   * beside its bundle at the same path, and the handler reads them under its working directory
   * (Lambda's /var/task; the repository root locally).
   */
  files: string[];
}

/**
 * A route as the table below writes it: one scope or a list; a write key follows from the method;
 * options default off.
 */
interface RouteSpec extends Pick<Route, 'operationId' | 'method' | 'path' | 'handler'> {
  scopes: Scope | readonly Scope[];
  idempotent?: boolean;
  secrets?: Route['secrets'];
  portalSession?: boolean;
  files?: string[];
}

const route = ({ operationId, method, path, scopes, handler, ...opts }: RouteSpec): Route => ({
  operationId,
  method,
  path,
  scopes: typeof scopes === 'string' ? [scopes] : scopes,
  write: method !== 'GET',
  idempotent: opts.idempotent ?? false,
  portalSession: opts.portalSession ?? false,
  handler,
  // Idempotent operations store their responses encrypted.
  secrets: [...new Set([...(opts.idempotent ? (['cipher'] as const) : []), ...(opts.secrets ?? [])])],
  files: opts.files ?? [],
});

/** Reading webhook endpoints and events: `webhooks:read`, or `webhooks:write`, which allows every read too. */
const WEBHOOKS_READ: readonly Scope[] = ['webhooks:read', 'webhooks:write'];
/** Reading the event feed: any scope that reads one family of events. */
const FEED_READ: readonly Scope[] = ['calls:read', 'jobs:read', ...WEBHOOKS_READ];
/** What a portal session's token may call (it is refused everywhere else). */
const PORTAL = { portalSession: true } as const;

export const routes: readonly Route[] = [
  route({
    operationId: 'createWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints',
    scopes: 'webhooks:write',
    handler: 'functions/api/create-webhook-endpoint.ts',
    idempotent: true,
    ...PORTAL,
  }),
  route({
    operationId: 'listWebhookEndpoints',
    method: 'GET',
    path: '/v1/webhook-endpoints',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/list-webhook-endpoints.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'getWebhookEndpoint',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/get-webhook-endpoint.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'updateWebhookEndpoint',
    method: 'PATCH',
    path: '/v1/webhook-endpoints/{id}',
    scopes: 'webhooks:write',
    handler: 'functions/api/update-webhook-endpoint.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'deleteWebhookEndpoint',
    method: 'DELETE',
    path: '/v1/webhook-endpoints/{id}',
    scopes: 'webhooks:write',
    handler: 'functions/api/delete-webhook-endpoint.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'listWebhookEndpointDeliveries',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/deliveries',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/list-webhook-endpoint-deliveries.ts',
    secrets: ['cursor'],
    ...PORTAL,
  }),
  route({
    operationId: 'getWebhookEndpointStats',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/stats',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/get-webhook-endpoint-stats.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'recoverWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints/{id}/recover',
    scopes: 'webhooks:write',
    handler: 'functions/api/recover-webhook-endpoint.ts',
    idempotent: true,
    ...PORTAL,
  }),
  route({
    operationId: 'getWebhookEndpointRecovery',
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/recoveries/{recovery_id}',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/get-webhook-endpoint-recovery.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'rotateWebhookEndpointSecret',
    method: 'POST',
    path: '/v1/webhook-endpoints/{id}/rotate-secret',
    scopes: 'webhooks:write',
    handler: 'functions/api/rotate-webhook-endpoint-secret.ts',
    idempotent: true,
    ...PORTAL,
  }),
  route({
    operationId: 'testWebhookEndpoint',
    method: 'POST',
    path: '/v1/webhook-endpoints/{id}/test',
    scopes: 'webhooks:write',
    handler: 'functions/api/test-webhook-endpoint.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'listEvents',
    method: 'GET',
    path: '/v1/events',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/list-events.ts',
    secrets: ['cursor'],
    ...PORTAL,
  }),
  // Each event family to the keys that read its data (shared/domain/event-feed-reader.ts); before
  // /v1/events/{id}, which would take `feed` for an id.
  route({
    operationId: 'getEventFeed',
    method: 'GET',
    path: '/v1/events/feed',
    scopes: FEED_READ,
    handler: 'functions/api/get-event-feed.ts',
    secrets: ['cursor'],
  }),
  route({
    operationId: 'getEvent',
    method: 'GET',
    path: '/v1/events/{id}',
    scopes: WEBHOOKS_READ,
    handler: 'functions/api/get-event.ts',
    ...PORTAL,
  }),
  // Any valid key (no scope): what each event type means and looks like.
  route({
    operationId: 'listEventTypes',
    method: 'GET',
    path: '/v1/event-types',
    scopes: [],
    handler: 'functions/api/list-event-types.ts',
    files: [EVENT_TYPE_CATALOG_FILE],
    ...PORTAL,
  }),
  route({
    operationId: 'redeliverEvent',
    method: 'POST',
    path: '/v1/events/{id}/redeliver',
    scopes: 'webhooks:write',
    handler: 'functions/api/redeliver-event.ts',
    ...PORTAL,
  }),
  route({
    operationId: 'createPortalSession',
    method: 'POST',
    path: '/v1/portal-sessions',
    scopes: 'webhooks:write',
    handler: 'functions/api/create-portal-session.ts',
    idempotent: true,
  }),
  route({
    operationId: 'listPortalSessions',
    method: 'GET',
    path: '/v1/portal-sessions',
    scopes: 'webhooks:write',
    handler: 'functions/api/list-portal-sessions.ts',
    secrets: ['cursor'],
  }),
  route({
    operationId: 'deletePortalSession',
    method: 'DELETE',
    path: '/v1/portal-sessions/{id}',
    scopes: 'webhooks:write',
    handler: 'functions/api/delete-portal-session.ts',
  }),
  route({
    operationId: 'listCalls',
    method: 'GET',
    path: '/v1/calls',
    scopes: 'calls:read',
    handler: 'functions/api/list-calls.ts',
    secrets: ['cursor'],
  }),
  route({
    operationId: 'getCall',
    method: 'GET',
    path: '/v1/calls/{id}',
    scopes: 'calls:read',
    handler: 'functions/api/get-call.ts',
  }),
  route({
    operationId: 'getCallTranscript',
    method: 'GET',
    path: '/v1/calls/{id}/transcript',
    scopes: 'transcripts:read',
    handler: 'functions/api/get-call-transcript.ts',
  }),
  route({
    operationId: 'getCallSummary',
    method: 'GET',
    path: '/v1/calls/{id}/summary',
    scopes: 'calls:read',
    handler: 'functions/api/get-call-summary.ts',
  }),
  route({
    operationId: 'listJobs',
    method: 'GET',
    path: '/v1/jobs',
    scopes: 'jobs:read',
    handler: 'functions/api/list-jobs.ts',
    secrets: ['cursor'],
  }),
  route({
    operationId: 'getJob',
    method: 'GET',
    path: '/v1/jobs/{id}',
    scopes: 'jobs:read',
    handler: 'functions/api/get-job.ts',
  }),
  route({
    operationId: 'approveJob',
    method: 'POST',
    path: '/v1/jobs/{id}/approve',
    scopes: 'jobs:write',
    handler: 'functions/api/approve-job.ts',
    idempotent: true,
  }),
  route({
    operationId: 'declineJob',
    method: 'POST',
    path: '/v1/jobs/{id}/decline',
    scopes: 'jobs:write',
    handler: 'functions/api/decline-job.ts',
    idempotent: true,
  }),
  route({
    operationId: 'getShop',
    method: 'GET',
    path: '/v1/shop',
    scopes: 'settings:read',
    handler: 'functions/api/get-shop.ts',
  }),
  route({
    operationId: 'updateShop',
    method: 'PATCH',
    path: '/v1/shop',
    scopes: 'settings:write',
    handler: 'functions/api/update-shop.ts',
    idempotent: true,
  }),
  route({
    operationId: 'getMe',
    method: 'GET',
    path: '/v1/me',
    scopes: 'settings:read',
    handler: 'functions/api/get-me.ts',
  }),
];

/**
 * The one public route family outside /v1: the webhook portal's page and its files, served
 * without a key by one static-asset function (the page takes a portal session's token or a key
 * and calls /v1 with it).
 * HEAD is answered as GET without the body (link checkers and monitors ask with it).
 */
export const portalRoute = {
  methods: ['GET', 'HEAD'],
  paths: ['/portal', '/portal/{file}'],
  handler: 'functions/portal.ts',
} as const;

const isPortalPath = (path: string): boolean => portalRoute.paths.some((p) => safeMatch(p, path) !== null);

/** Whether a request is for the portal (API Gateway's routes above, as the local adapter matches them). */
export function isPortalRequest(method: string, path: string): boolean {
  return (portalRoute.methods as readonly string[]).includes(method) && isPortalPath(path);
}

export function routeById(operationId: string): Route {
  const found = routes.find((r) => r.operationId === operationId);
  if (!found) throw new Error(`Unknown operation ${operationId}`);
  return found;
}

/** Matches a concrete path against a route path; returns its parameters, or null. */
export function matchPath(routePath: string, path: string): Record<string, string> | null {
  const want = routePath.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith('{') && w.endsWith('}')) {
      if (g === '') return null;
      params[w.slice(1, -1)] = decodeURIComponent(g);
    } else if (w !== g) {
      return null;
    }
  }
  return params;
}

export type Resolution =
  | { kind: 'route'; route: Route; pathParameters: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: (HttpMethod | 'HEAD')[] }
  | { kind: 'not_found' };

/**
 * What a (method, path) pair means: a route, a known path with another method, or nothing.
 * The portal's own requests (`isPortalRequest`) reach its route first and are never asked here.
 */
export function resolve(method: string, path: string): Resolution {
  const onPath = routes
    .map((r) => ({ route: r, params: safeMatch(r.path, path) }))
    .filter((m): m is { route: Route; params: Record<string, string> } => m.params !== null);
  const hit = onPath.find((m) => m.route.method === method);
  if (hit) return { kind: 'route', route: hit.route, pathParameters: hit.params };
  if (onPath.length > 0) return { kind: 'method_not_allowed', allow: onPath.map((m) => m.route.method) };
  if (isPortalPath(path)) return { kind: 'method_not_allowed', allow: [...portalRoute.methods] };
  return { kind: 'not_found' };
}

function safeMatch(routePath: string, path: string): Record<string, string> | null {
  try {
    return matchPath(routePath, path);
  } catch {
    return null; // malformed percent-encoding never matches a route
  }
}
