import { createShop } from '../../shared/domain/shop';
import { makeHandler as makeGetShop } from '../../functions/api/get-shop';
import { makeHandler as makeUpdateShop } from '../../functions/api/update-shop';
import { handler as fallback } from '../../functions/fallback';
import * as z from 'zod/mini';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { MemoryShopStore } from '../helpers/memory-shops';

describe('HTTP pipeline (store faked)', () => {
  const shops = new MemoryShopStore();
  const deps = () => ({
    shops,
    now: () => new Date('2026-11-21T12:00:00.000Z'),
    // The Idempotency-Key values these tests send are refused before the store is used.
    get idempotency(): never {
      throw new Error('no idempotency store in unit tests');
    },
  });
  const getShop = makeGetShop(deps);
  const updateShop = makeUpdateShop(deps);
  let me: ReturnType<typeof principal>;

  beforeAll(async () => {
    const shop = await createShop({ shops }, { name: 'Unit Shop', owner_email: 'o@unit.test' });
    me = principal({ shopId: shop.id });
  });

  const patch = (body: string | undefined, headers: Record<string, string> = {}, who = me) =>
    updateShop(apiEvent({ method: 'PATCH', path: '/v1/shop', body, headers, principal: who }), context());
  const errorCode = (result: { body?: string }) => (parseBody(result).error as Record<string, unknown>).code;

  it('answers GET /v1/shop with the shop and a Request-Id', async () => {
    const result = await getShop(apiEvent({ method: 'GET', path: '/v1/shop', principal: me }), context());
    expect(result.statusCode).toBe(200);
    expect(parseBody(result)).toMatchObject({ object: 'shop', id: me.shopId, name: 'Unit Shop' });
    expect(result.headers['request-id']).toMatch(/^req_/);
  });

  it('checks the key: 401 without one, 403 without the scope, 403 for read-only keys on writes', async () => {
    const anonymous = await getShop(apiEvent({ method: 'GET', path: '/v1/shop', principal: null }), context());
    expect([anonymous.statusCode, errorCode(anonymous)]).toEqual([401, 'missing_api_key']);
    const noScope = await getShop(
      apiEvent({ method: 'GET', path: '/v1/shop', principal: { ...me, scopes: ['calls:read'] } }),
      context(),
    );
    expect([noScope.statusCode, errorCode(noScope)]).toEqual([403, 'insufficient_scope']);
    expect(parseBody(noScope).error).toMatchObject({ message: expect.stringContaining('settings:read') });
    const readOnly = await patch('{"greeting":"hi"}', {}, { ...me, write: false });
    expect([readOnly.statusCode, errorCode(readOnly)]).toEqual([403, 'write_key_required']);
  });

  it.each([
    ['{"greeting":', {}, 400, 'invalid_json'],
    ['[1,2]', {}, 400, 'invalid_json'],
    ['"text"', {}, 400, 'invalid_json'],
    ['null', {}, 400, 'invalid_json'],
    ['{"greeting":"hi"}', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['{"greeting":"hi"}', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
    [JSON.stringify({ greeting: 'x'.repeat(70 * 1024) }), {}, 413, 'body_too_large'],
    ['{"greeting":"hi","color":"red"}', {}, 400, 'parameter_unknown'],
    ['{"greeting":"hi"}', { 'idempotency-key': '' }, 400, 'parameter_invalid'],
    ['{"greeting":"hi"}', { 'idempotency-key': 'k'.repeat(256) }, 400, 'parameter_invalid'],
    ['{"greeting":"hi"}', { 'idempotency-key': 'clé' }, 400, 'parameter_invalid'],
  ])('%s with %j → %d %s, shop unchanged', async (body, headers, status, code) => {
    const before = shops.updates;
    const result = await patch(body, headers);
    expect([result.statusCode, errorCode(result)]).toEqual([status, code]);
    expect(shops.updates).toBe(before);
  });

  it('applies a valid patch and returns the whole shop', async () => {
    const result = await patch('{"greeting":"Hi there","hours":{"sun":[{"open":"10:00","close":"14:00"}]}}');
    expect(result.statusCode).toBe(200);
    const shop = parseBody(result);
    expect(shop).toMatchObject({ greeting: 'Hi there', updated_at: '2026-11-21T12:00:00.000Z' });
    expect(Object.keys(shop.hours as object)).toEqual(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
    expect((shop.hours as Record<string, unknown>).mon).toEqual([{ open: '08:00', close: '17:00' }]);
  });

  it('rejects unknown query parameters', async () => {
    const result = await getShop(
      apiEvent({ method: 'GET', path: '/v1/shop', query: { expand: 'all' }, principal: me }),
      context(),
    );
    expect([result.statusCode, errorCode(result)]).toEqual([400, 'parameter_unknown']);
  });

  it('an operation without input refuses a query parameter or body field exactly as a schema of no fields does', async () => {
    const query = await getShop(
      apiEvent({ method: 'GET', path: '/v1/shop', query: { expand: 'all', limit: '3' }, principal: me }),
      context(),
    );
    const viaZod = apiHandler('getShop', requestSchemas({ query: z.strictObject({}) }), async () => ({
      status: 200,
      body: {},
    }));
    const zodQuery = await viaZod(
      apiEvent({ method: 'GET', path: '/v1/shop', query: { expand: 'all', limit: '3' }, principal: me }),
      context(),
    );
    const withoutId = (r: { body?: string }) => ({
      ...(parseBody(r).error as Record<string, unknown>),
      request_id: undefined,
    });
    expect([query.statusCode, withoutId(query)]).toEqual([zodQuery.statusCode, withoutId(zodQuery)]);
    expect(parseBody(query).error).toMatchObject({
      code: 'parameter_unknown',
      param: 'expand',
      message: 'Received unknown parameter: expand',
    });
    const noBody = apiHandler('deleteWebhookEndpoint', {}, async () => ({ status: 200, body: {} }));
    const body = await noBody(
      apiEvent({ method: 'DELETE', path: '/v1/webhook-endpoints/we_1', body: '{"force":true}', principal: me }),
      context(),
    );
    expect([body.statusCode, parseBody(body).error]).toEqual([
      400,
      expect.objectContaining({ code: 'parameter_unknown', param: 'force' }),
    ]);
    const empty = await noBody(
      apiEvent({ method: 'DELETE', path: '/v1/webhook-endpoints/we_1', body: '{}', principal: me }),
      context(),
    );
    expect(empty.statusCode).toBe(200);
  });

  it('refuses to build an operation whose schemas have no validator', () => {
    const run = async () => ({ status: 200, body: {} });
    expect(() => apiHandler('listCalls', { query: z.strictObject({}) }, run)).toThrow(/requestSchemas/);
    expect(() => apiHandler('listCalls', requestSchemas({ query: z.strictObject({}) }), run)).not.toThrow();
  });

  it('refuses to build an operation whose idempotency disagrees with the route table', () => {
    const run = async () => ({ status: 200, body: {} });
    expect(() => apiHandler('approveJob', {}, run)).toThrow(/idempotent=true/);
    expect(() => apiHandler('getShop', {}, run, { idempotency: { before: () => undefined } })).toThrow(
      /idempotent=false/,
    );
    expect(() => apiHandler('approveJob', {}, run, { idempotency: { before: () => undefined } })).not.toThrow();
  });

  it('turns an unexpected failure into a 500 that reveals nothing', async () => {
    const failing = apiHandler('getShop', {}, async () => {
      throw new Error('connect ECONNREFUSED 10.0.3.7:443 table/prod-secret');
    });
    const result = await failing(apiEvent({ method: 'GET', path: '/v1/shop', principal: me }), context());
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toMatch(/ECONNREFUSED|10\.0\.3\.7|prod-secret/);
    expect(errorCode(result)).toBe('internal_error');
  });

  it('answers unknown paths, wrong methods and unbuilt operations in the contract format', async () => {
    const notFound = await fallback(apiEvent({ method: 'GET', path: '/v2/shop' }), context());
    expect([notFound.statusCode, errorCode(notFound)]).toEqual([404, 'route_not_found']);
    const wrongMethod = await fallback(apiEvent({ method: 'PUT', path: '/v1/me' }), context());
    expect([wrongMethod.statusCode, errorCode(wrongMethod), wrongMethod.headers.allow]).toEqual([
      405,
      'method_not_allowed',
      'GET',
    ]);
    const unbuilt = await fallback(apiEvent({ method: 'GET', path: '/v1/events' }), context());
    expect(unbuilt.statusCode).toBe(501);
  });
});
