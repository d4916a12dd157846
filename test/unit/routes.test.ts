import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SCOPES } from '../../shared/domain/scopes';
import { resolve, routeById, routes } from '../../shared/routes';

const ROOT = join(__dirname, '..', '..');

describe('route table', () => {
  it("has the 19 operations of the spec, the 5 of endpoint lifecycle and visibility, a recovery's progress, the 3 of portal sessions, the event types and the event feed, each once", () => {
    expect(routes).toHaveLength(30);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBe(30);
    expect(new Set(routes.map((r) => r.operationId)).size).toBe(30);
  });

  it('requires a write key exactly for POST, PATCH and DELETE, and a known scope everywhere but the event types', () => {
    for (const r of routes) {
      expect(r.write).toBe(r.method !== 'GET');
      expect([r.operationId, r.scopes.length > 0]).toEqual([r.operationId, r.operationId !== 'listEventTypes']);
      for (const scope of r.scopes) expect(SCOPES).toContain(scope);
    }
  });

  it('allows every GET of webhook endpoints and events with webhooks:read or webhooks:write, and every webhook write with webhooks:write alone', () => {
    const webhook = routes.filter(
      (r) => /^\/v1\/(webhook-endpoints|events)(\/|$)/.test(r.path) && r.operationId !== 'getEventFeed',
    );
    expect(webhook).toHaveLength(14);
    for (const r of webhook)
      expect([r.operationId, r.scopes]).toEqual([
        r.operationId,
        r.method === 'GET' ? ['webhooks:read', 'webhooks:write'] : ['webhooks:write'],
      ]);
    expect(routes.filter((r) => r.scopes.includes('webhooks:read')).every((r) => r.method === 'GET')).toBe(true);
  });

  it('lets any scope that reads a family of events read the feed, and resolves its path before an event id', () => {
    expect(routeById('getEventFeed').scopes).toEqual(['calls:read', 'jobs:read', 'webhooks:read', 'webhooks:write']);
    expect(resolve('GET', '/v1/events/feed')).toMatchObject({ kind: 'route', route: { operationId: 'getEventFeed' } });
    expect(resolve('GET', '/v1/events/evt_1')).toMatchObject({ kind: 'route', route: { operationId: 'getEvent' } });
  });

  it("lets a portal session's token call exactly the webhook endpoint operations, the event reads, the event types and redeliver", () => {
    expect(
      routes
        .filter((r) => r.portalSession)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual([
      'createWebhookEndpoint',
      'deleteWebhookEndpoint',
      'getEvent',
      'getWebhookEndpoint',
      'getWebhookEndpointRecovery',
      'getWebhookEndpointStats',
      'listEventTypes',
      'listEvents',
      'listWebhookEndpointDeliveries',
      'listWebhookEndpoints',
      'recoverWebhookEndpoint',
      'redeliverEvent',
      'rotateWebhookEndpointSecret',
      'testWebhookEndpoint',
      'updateWebhookEndpoint',
    ]);
  });

  it('accepts Idempotency-Key on exactly the four operations of the spec, recover, rotate-secret and portal session create', () => {
    expect(
      routes
        .filter((r) => r.idempotent)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual(
      [
        'approveJob',
        'createWebhookEndpoint',
        'declineJob',
        'updateShop',
        'recoverWebhookEndpoint',
        'rotateWebhookEndpointSecret',
        'createPortalSession',
      ].sort(),
    );
  });

  it('points every built route at a handler file that exists', () => {
    for (const r of routes.filter((r) => r.handler)) expect(existsSync(join(ROOT, r.handler as string))).toBe(true);
  });

  it.each([
    ['GET', '/v1/calls/call_x/transcript', 'route', 'getCallTranscript'],
    ['POST', '/v1/jobs/job_1/approve', 'route', 'approveJob'],
    ['PATCH', '/v1/shop', 'route', 'updateShop'],
    ['DELETE', '/v1/shop', 'method_not_allowed', 'GET, PATCH'],
    ['DELETE', '/v1/webhook-endpoints/we_1', 'route', 'deleteWebhookEndpoint'],
    ['PUT', '/v1/webhook-endpoints/we_1', 'method_not_allowed', 'GET, PATCH, DELETE'],
    ['GET', '/v1/webhook-endpoints/we_1/deliveries', 'route', 'listWebhookEndpointDeliveries'],
    ['GET', '/v1/webhook-endpoints/we_1/recover', 'method_not_allowed', 'POST'],
    ['GET', '/v1/webhook-endpoints/we_1/recoveries/rcv_1', 'route', 'getWebhookEndpointRecovery'],
    ['POST', '/v1/webhook-endpoints/we_1/recoveries/rcv_1', 'method_not_allowed', 'GET'],
    ['GET', '/v1/jobs/job_1/approve', 'method_not_allowed', 'POST'],
    ['POST', '/v1/portal-sessions', 'route', 'createPortalSession'],
    ['GET', '/v1/portal-sessions', 'route', 'listPortalSessions'],
    ['PATCH', '/v1/portal-sessions', 'method_not_allowed', 'POST, GET'],
    ['DELETE', '/v1/portal-sessions/ps_1', 'route', 'deletePortalSession'],
    ['GET', '/v1/portal-sessions/ps_1', 'method_not_allowed', 'DELETE'],
    ['GET', '/v1/nothing', 'not_found', ''],
    ['GET', '/v1/calls/', 'not_found', ''],
    ['GET', '/v1/calls/%E0%A4%A', 'not_found', ''],
    ['POST', '/portal', 'method_not_allowed', 'GET, HEAD'],
    ['DELETE', '/portal/app.js', 'method_not_allowed', 'GET, HEAD'],
    ['POST', '/portal/a/b', 'not_found', ''],
  ])('%s %s → %s', (method, path, kind, detail) => {
    const res = resolve(method, path);
    expect(res.kind).toBe(kind);
    if (res.kind === 'route') expect(res.route.operationId).toBe(detail);
    if (res.kind === 'method_not_allowed') expect(res.allow.join(', ')).toBe(detail);
  });
});
