import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SCOPES } from '../../shared/domain/scopes';
import { resolve, routes } from '../../shared/routes';

const ROOT = join(__dirname, '..', '..');

describe('route table', () => {
  it('has the 19 operations of the spec, each once', () => {
    expect(routes).toHaveLength(19);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBe(19);
    expect(new Set(routes.map((r) => r.operationId)).size).toBe(19);
  });

  it('requires a write key exactly for POST and PATCH, and a known scope everywhere', () => {
    for (const r of routes) {
      expect(r.write).toBe(r.method !== 'GET');
      expect(SCOPES).toContain(r.scope);
    }
  });

  it('accepts Idempotency-Key on exactly the four operations of the spec', () => {
    expect(routes.filter((r) => r.idempotent).map((r) => r.operationId).sort()).toEqual(
      ['approveJob', 'createWebhookEndpoint', 'declineJob', 'updateShop'].sort(),
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
    ['GET', '/v1/jobs/job_1/approve', 'method_not_allowed', 'POST'],
    ['GET', '/v1/nothing', 'not_found', ''],
    ['GET', '/v1/calls/', 'not_found', ''],
    ['GET', '/v1/calls/%E0%A4%A', 'not_found', ''],
  ])('%s %s → %s', (method, path, kind, detail) => {
    const res = resolve(method, path);
    expect(res.kind).toBe(kind);
    if (res.kind === 'route') expect(res.route.operationId).toBe(detail);
    if (res.kind === 'method_not_allowed') expect(res.allow.join(', ')).toBe(detail);
  });
});
