import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { handler as fallback } from '../../functions/fallback';
import { ASSETS, handler, PORTAL_CSP } from '../../functions/portal';
import { DELIVERY_STATUSES } from '../../shared/delivery/status';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/event-types';
import { isPortalRequest } from '../../shared/routes';

const DIR = join(process.cwd(), 'portal');
const eventOf = (method: string, path: string) =>
  ({
    rawPath: path,
    headers: {},
    requestContext: { requestId: 'req_1', http: { method, path } },
  }) as unknown as APIGatewayProxyEventV2;
const get = (path: string, method = 'GET') => handler(eventOf(method, path), {} as Context);

describe('webhook portal function', () => {
  it('serves every file of portal/ (and nothing else) with its type, the strict CSP and nosniff', async () => {
    const files = readdirSync(DIR).sort();
    expect(
      Object.values(ASSETS)
        .map((a) => a.file)
        .sort(),
    ).toEqual(files);
    for (const [path, asset] of Object.entries(ASSETS)) {
      const r = await get(path);
      expect([path, r.statusCode]).toEqual([path, 200]);
      expect(r.body).toBe(readFileSync(join(DIR, asset.file), 'utf8'));
      expect(r.headers).toMatchObject({
        'content-type': asset.type,
        'content-security-policy': PORTAL_CSP,
        'x-content-type-options': 'nosniff',
      });
    }
    expect(PORTAL_CSP).toContain("default-src 'self'");
    expect(PORTAL_CSP).toContain("connect-src 'self'");
    expect(PORTAL_CSP).not.toContain('unsafe');
  });

  it('answers 404 in the contract format for any other path, traversal included', async () => {
    for (const path of ['/portal/secret.txt', '/portal/..%2Fpackage.json', '/portal/index.html', '/portal/']) {
      const r = await get(path);
      expect([path, r.statusCode]).toEqual([path, 404]);
      expect(JSON.parse(r.body as string).error.code).toBe('route_not_found');
    }
  });

  it('answers HEAD as GET, without the body', async () => {
    for (const path of Object.keys(ASSETS)) {
      const [getReply, headReply] = [await get(path), await get(path, 'HEAD')];
      expect([headReply.statusCode, headReply.body]).toEqual([200, '']);
      expect(headReply.headers).toEqual(getReply.headers);
    }
  });

  it('is matched by the local adapter exactly where API Gateway routes it (GET and HEAD /portal and /portal/{file})', () => {
    expect(isPortalRequest('GET', '/portal')).toBe(true);
    expect(isPortalRequest('GET', '/portal/app.js')).toBe(true);
    expect(isPortalRequest('HEAD', '/portal')).toBe(true);
    expect(isPortalRequest('HEAD', '/portal/app.js')).toBe(true);
    expect(isPortalRequest('POST', '/portal')).toBe(false);
    expect(isPortalRequest('GET', '/portal/a/b')).toBe(false);
    expect(isPortalRequest('GET', '/portalx')).toBe(false);
  });

  it('leaves other methods to the fallback, which answers 405 with Allow: GET, HEAD', async () => {
    for (const [method, path] of [
      ['POST', '/portal'],
      ['DELETE', '/portal/app.js'],
      ['PUT', '/portal/nothing.js'],
    ] as const) {
      const r = await fallback(eventOf(method, path), {} as Context);
      expect([method, path, r.statusCode, r.headers.allow]).toEqual([method, path, 405, 'GET, HEAD']);
      expect(JSON.parse(r.body as string).error.code).toBe('method_not_allowed');
    }
    expect((await fallback(eventOf('POST', '/portal/a/b'), {} as Context)).statusCode).toBe(404);
  });

  it('has no inline script, style or handler in its page, and no markup-parsing call in its scripts', () => {
    const html = readFileSync(join(DIR, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//); // no CDN: every asset is served here
    for (const file of readdirSync(DIR).filter((f) => f.endsWith('.js'))) {
      const js = readFileSync(join(DIR, file), 'utf8');
      expect([file, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/.test(js)]).toEqual([
        file,
        false,
      ]);
      expect([file, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/.test(js)]).toEqual([file, false]); // the SVG namespace is a name, not a fetch
    }
  });

  it('links its own icon, served as SVG, so the browser asks for no /favicon.ico', () => {
    const html = readFileSync(join(DIR, 'index.html'), 'utf8');
    expect(html).toContain('<link rel="icon" href="/portal/favicon.svg" type="image/svg+xml" />');
    expect(ASSETS['/portal/favicon.svg']).toEqual({ file: 'favicon.svg', type: 'image/svg+xml' });
  });

  it('edits an endpoint by sending only the settings the form changed, null for one emptied', async () => {
    const page = '../../portal/edit-endpoint.js';
    const { changedFields } = (await import(page)) as {
      changedFields(loaded: unknown, values: unknown): Record<string, unknown>;
    };
    const loaded = {
      url: 'https://hooks.example/a',
      events: ['call.completed', 'job.created'],
      filter: { 'data.emergency': true },
      ordering: 'per_resource',
      rate_limit: 5,
      description: 'CRM',
      updated_at: '2026-11-28T10:00:00.000Z',
    };
    const same = { ...loaded, events: ['job.created', 'call.completed'], filter: { 'data.emergency': true } };
    expect(changedFields(loaded, same)).toEqual({});
    expect(changedFields(loaded, { ...same, url: 'https://hooks.example/b', rate_limit: 7 })).toEqual({
      url: 'https://hooks.example/b',
      rate_limit: 7,
    });
    expect(changedFields(loaded, { ...same, filter: null, rate_limit: null, description: null })).toEqual({
      filter: null,
      rate_limit: null,
      description: null,
    });
    expect(changedFields(loaded, { ...same, events: ['*'], ordering: 'none' })).toEqual({
      events: ['*'],
      ordering: 'none',
    });
  });

  it("offers the API's event types and delivery statuses", async () => {
    // A browser module without type declarations: loaded by path (the tsconfig checks no .js).
    const page = '../../portal/api.js';
    const { EVENT_TYPES: PAGE_EVENT_TYPES, DELIVERY_STATUSES: PAGE_STATUSES } = (await import(page)) as {
      EVENT_TYPES: string[];
      DELIVERY_STATUSES: string[];
    };
    expect(PAGE_EVENT_TYPES).toEqual([...SUBSCRIBABLE_EVENT_TYPES]);
    expect(PAGE_STATUSES).toEqual([...DELIVERY_STATUSES]);
  });

  it("says an endpoint's health in plain words, never the engine's (circuit, probe)", async () => {
    const page = '../../portal/health.js';
    const { healthOf } = (await import(page)) as {
      healthOf(e: unknown, at: (iso: string | null) => string): { tone: string; text: string };
    };
    const at = (iso: string | null) => (iso ? iso.slice(11, 16) : '?');
    const health = {
      circuit: 'closed',
      consecutive_failures: 0,
      last_success_at: null,
      last_failure_at: null,
      next_probe_at: null,
    };
    const e = (over: Record<string, unknown>, h: Record<string, unknown> = {}) =>
      healthOf({ enabled: true, disabled_reason: null, failing_since: null, ...over, health: { ...health, ...h } }, at);
    expect(
      e(
        {},
        {
          circuit: 'open',
          consecutive_failures: 5,
          last_failure_at: '2026-11-23T14:40:00.000Z',
          next_probe_at: '2026-11-23T14:57:00.000Z',
        },
      ).text,
    ).toBe('Failing since 14:40, retrying; next try at 14:57.');
    expect(
      e(
        { failing_since: '2026-11-23T14:02:00.000Z' },
        { circuit: 'open', consecutive_failures: 5, next_probe_at: '2026-11-23T14:57:00.000Z' },
      ),
    ).toEqual({ tone: 'bad', text: 'Failing since 14:02, retrying; next try at 14:57.' });
    expect(e({ failing_since: '2026-11-23T14:02:00.000Z' }, { circuit: 'half_open' }).text).toBe(
      'Failing since 14:02; trying again now.',
    );
    expect(e({}, { consecutive_failures: 1, last_failure_at: '2026-11-23T09:15:00.000Z' }).text).toBe(
      'The last delivery failed at 09:15; retrying.',
    );
    expect(e({}, { last_success_at: '2026-11-23T08:00:00.000Z' })).toEqual({
      tone: 'ok',
      text: 'Working. Last delivered at 08:00.',
    });
    expect(e({}).text).toBe('Ready. Nothing has been sent to it yet.');
    expect(e({ enabled: false, disabled_reason: 'manual' }).text).toMatch(/^Turned off\. /);
    expect(e({ enabled: false, disabled_reason: 'failing', failing_since: '2026-11-20T10:00:00.000Z' }).text).toMatch(
      /^Turned off automatically: it kept failing for 3 days \(since 10:00\)/,
    );
    expect(e({ enabled: false, disabled_reason: 'gone' }).text).toMatch(/410 Gone/);
  });
});
