import { issueKey } from '../../shared/domain/api-keys';
import { call, expectError } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

describe('authentication and routing through the local HTTP adapter', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.stop());

  it('GET /v1/me returns the key profile', async () => {
    const reply = await call(stack.url, 'GET', '/v1/me', { key: stack.demo.writeKey.key });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      object: 'key_profile',
      shop: {
        id: stack.demo.shop.id,
        name: 'Demo Plumbing Co',
        trade: 'plumbing',
        timezone: 'America/New_York',
        phone_number: stack.demo.shop.phone_number,
      },
      plan: { name: 'starter', included_credits: 500 },
      credits: { balance: 500, used_this_period: 0 },
      line: { status: 'active', phone_number: stack.demo.shop.phone_number },
      key: {
        id: stack.demo.writeKey.id,
        mode: 'test',
        scopes: expect.arrayContaining(['settings:read']),
        write: true,
        created_at: expect.any(String),
      },
    });
    expect(reply.headers.get('request-id')).toMatch(/^req_/);
  });

  it.each([
    ['no Authorization header', {}, 'missing_api_key'],
    ['a garbled header', { authorization: 'Token abc' }, 'missing_api_key'],
    ['an empty bearer', { authorization: 'Bearer ' }, 'missing_api_key'],
    ['a malformed key', { authorization: 'Bearer sk_test_nope' }, 'invalid_api_key'],
    ['an unknown key', { authorization: `Bearer sk_test_${'A'.repeat(40)}` }, 'invalid_api_key'],
  ])('%s → 401 %s', async (_label, headers, code) => {
    const reply = await call(stack.url, 'GET', '/v1/me', { headers });
    expectError(reply, 401, code);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('a key sent without "Bearer" → 401 that says to add it (through the authorizer, as in AWS)', async () => {
    const reply = await call(stack.url, 'GET', '/v1/me', { headers: { authorization: stack.demo.writeKey.key } });
    const error = expectError(reply, 401, 'missing_api_key');
    expect(error.message).toBe('The Authorization header must be "Bearer <API_KEY>": put "Bearer " before the key.');
    expect(error.message).not.toContain(stack.demo.writeKey.key);
  });

  it('a revoked key → 401 invalid_api_key', async () => {
    const deps = stack.deps;
    const { record, key } = await issueKey(deps.apiKeys, {
      shopId: stack.demo.shop.id,
      scopes: ['settings:read'],
      write: false,
      mode: 'test',
    });
    expect((await call(stack.url, 'GET', '/v1/me', { key })).status).toBe(200);
    await deps.apiKeys.revoke(record.id, new Date().toISOString());
    const reply = await call(stack.url, 'GET', '/v1/me', { key });
    expect(expectError(reply, 401, 'invalid_api_key').message).toMatch(/revoked/);
  });

  it('a key without the scope → 403 insufficient_scope; a read-only key on PATCH → 403 write_key_required', async () => {
    const { key } = await issueKey(stack.deps.apiKeys, {
      shopId: stack.demo.shop.id,
      scopes: ['calls:read'],
      write: true,
      mode: 'test',
    });
    expect(expectError(await call(stack.url, 'GET', '/v1/shop', { key }), 403, 'insufficient_scope').message).toContain(
      'settings:read',
    );
    const readOnly = await call(stack.url, 'PATCH', '/v1/shop', {
      key: stack.demo.readKey.key,
      body: { greeting: 'hi' },
    });
    expectError(readOnly, 403, 'write_key_required');
  });

  it('serves the OpenAPI document without a key', async () => {
    const reply = await call(stack.url, 'GET', '/v1/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ openapi: '3.1.0', info: { title: 'Shop Calls API' } });
    expect(Object.keys(reply.json.paths as object)).toContain('/v1/jobs/{id}/approve');
  });

  it('unknown path → 404, wrong method → 405 with Allow', async () => {
    expectError(await call(stack.url, 'GET', '/v1/unknown', { key: stack.demo.writeKey.key }), 404, 'route_not_found');
    const wrong = await call(stack.url, 'DELETE', '/v1/me', { key: stack.demo.writeKey.key });
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET');
  });
});
