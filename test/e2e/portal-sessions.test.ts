import { request } from 'node:http';
import { hashKey, issueKey } from '../../shared/domain/api-keys';
import type { PortalSessionRecord } from '../../shared/domain/portal-sessions';
import { createShop } from '../../shared/domain/shop';
import { SCOPES, type Scope } from '../../shared/domain/scopes';
import { newId } from '../../shared/ids';
import { call, expectError } from '../helpers/http';
import { validateResponse } from '../helpers/openapi-validator';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;

/**
 * The two operations of portal sessions, what their tokens may do, and the webhooks:read scope
 * (docs/api.md, Portal sessions).
 */
describe('portal sessions and the webhooks:read scope', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.stop());

  /** A shop of its own, with a key of the given scopes. */
  async function tenant(scopes: readonly Scope[] = SCOPES, write = true) {
    const shop = await createShop(stack.deps, { name: 'Müller Heating & Air', owner_email: 'owner@portal.test' });
    const { key, record } = await issueKey(stack.deps.apiKeys, {
      shopId: shop.id,
      scopes: [...scopes],
      write,
      mode: 'test',
    });
    return {
      shop,
      key,
      keyId: record.id,
      as:
        (k: string) =>
        (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
          call(stack.url, method, path, { key: k, body, headers }),
    };
  }
  const session = async (key: string, body: unknown = {}) => {
    const r = await call(stack.url, 'POST', '/v1/portal-sessions', { key, body });
    expect(r.status).toBe(201);
    return r.json as {
      id: string;
      token: string;
      url: string;
      read_only: boolean;
      expires_at: string;
      created_at: string;
    };
  };

  it(
    "POST answers 201 with the token once, a link to this API's portal, the expiry " +
      'asked for; the token manages webhooks and tells the page about the session',
    async () => {
      const t = await tenant();
      const before = Date.now();
      const s = await session(t.key, { expires_in: 900 });
      expect(s).toEqual({
        object: 'portal_session',
        id: expect.stringMatching(/^ps_[0-9a-z]{26}$/),
        token: expect.stringMatching(/^pst_[0-9A-Za-z]{40}$/),
        url: `${stack.url}/portal#token=${s.token}`,
        read_only: false,
        expires_at: expect.any(String),
        created_at: expect.any(String),
      });
      expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(900_000);
      expect(Date.parse(s.created_at)).toBeGreaterThanOrEqual(before - 1000);

      const api = t.as(s.token);
      const created = await api('POST', '/v1/webhook-endpoints', {
        url: 'https://hooks.partner.example/portal',
        events: ['call.completed'],
      });
      expect(created.status).toBe(201);
      expect(created.json.secret).toMatch(/^whsec_/);
      const listed = await api('GET', '/v1/webhook-endpoints');
      expect(listed.status).toBe(200);
      expect([
        listed.headers.get('portal-session-id'),
        listed.headers.get('portal-session-expires-at'),
        listed.headers.get('portal-session-read-only'),
      ]).toEqual([s.id, s.expires_at, 'false']);
      expect(decodeURIComponent(listed.headers.get('portal-session-shop-name') ?? '')).toBe('Müller Heating & Air');
      const id = created.json.id as string;
      expect((await api('POST', `/v1/webhook-endpoints/${id}/test`)).status).toBe(202);
      expect((await api('GET', '/v1/events')).status).toBe(200);
      expect((await api('GET', `/v1/webhook-endpoints/${id}/stats`)).status).toBe(200);
      expect((await api('PATCH', `/v1/webhook-endpoints/${id}`, { enabled: false })).status).toBe(200);
      expect((await api('DELETE', `/v1/webhook-endpoints/${id}`)).status).toBe(200);
      // An answer to a key says nothing about sessions.
      expect((await t.as(t.key)('GET', '/v1/webhook-endpoints')).headers.get('portal-session-id')).toBeNull();
    },
  );

  it("links to this stack's own address whatever Host header the request carries", async () => {
    const t = await tenant();
    const body = JSON.stringify({ read_only: true });
    // fetch sets Host from the URL; a client of its own sends any Host it likes.
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${stack.url}/v1/portal-sessions`,
        {
          method: 'POST',
          headers: {
            host: 'portal.attacker.example',
            'x-forwarded-proto': 'https',
            authorization: `Bearer ${t.key}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(answer.status).toBe(201);
    const made = JSON.parse(answer.text) as { token: string; url: string };
    validateResponse('POST', '/v1/portal-sessions', answer.status, made);
    expect(made.url).toBe(`${stack.url}/portal#token=${made.token}`);
  });

  it(
    'the token is 403 insufficient_scope on everything outside ' +
      'the portal: jobs, calls, the shop, and making more sessions',
    async () => {
      const t = await tenant();
      const api = t.as((await session(t.key)).token);
      for (const [method, path] of [
        ['POST', '/v1/jobs/job_01jd0000000000000000000000/approve'],
        ['GET', '/v1/calls'],
        ['GET', '/v1/shop'],
        ['GET', '/v1/me'],
        ['PATCH', '/v1/shop'],
        ['POST', '/v1/portal-sessions'],
        ['GET', '/v1/portal-sessions'],
        ['DELETE', '/v1/portal-sessions/ps_01jd0000000000000000000000'],
      ] as const) {
        const error = expectError(
          await api(method, path, method === 'GET' || method === 'DELETE' ? undefined : { version: 1 }),
          403,
          'insufficient_scope',
        );
        expect([method, path, error.message]).toEqual([
          method,
          path,
          expect.stringMatching(/portal session .* cannot call/),
        ]);
      }
    },
  );

  it('a read-only session reads, and every write is 403 insufficient_scope naming webhooks:write', async () => {
    const t = await tenant();
    const endpoint = await t.as(t.key)('POST', '/v1/webhook-endpoints', {
      url: 'https://hooks.partner.example/ro',
      events: ['*'],
    });
    const s = await session(t.key, { read_only: true });
    expect(s.read_only).toBe(true);
    const api = t.as(s.token);
    const listed = await api('GET', '/v1/webhook-endpoints');
    expect([listed.status, listed.headers.get('portal-session-read-only')]).toEqual([200, 'true']);
    expect((await api('GET', `/v1/webhook-endpoints/${endpoint.json.id as string}/deliveries`)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/v1/webhook-endpoints', { url: 'https://x.example/a', events: ['*'] }],
      ['DELETE', `/v1/webhook-endpoints/${endpoint.json.id as string}`, undefined],
      ['POST', `/v1/webhook-endpoints/${endpoint.json.id as string}/rotate-secret`, undefined],
    ] as const) {
      expect(expectError(await api(method, path, body), 403, 'insufficient_scope').message).toMatch(
        /read-only.*'webhooks:write'/,
      );
    }
  });

  it(
    'DELETE ends the session at once (401 saying it was ' +
      "revoked); a second DELETE and another shop's DELETE are 404",
    async () => {
      const t = await tenant();
      const other = await tenant();
      const s = await session(t.key);
      expect((await t.as(s.token)('GET', '/v1/webhook-endpoints')).status).toBe(200);
      expectError(await other.as(other.key)('DELETE', `/v1/portal-sessions/${s.id}`), 404, 'resource_missing');
      const deleted = await t.as(t.key)('DELETE', `/v1/portal-sessions/${s.id}`);
      expect([deleted.status, deleted.json]).toEqual([200, { id: s.id, object: 'portal_session', deleted: true }]);
      const refused = await t.as(s.token)('GET', '/v1/webhook-endpoints');
      expect(expectError(refused, 401, 'invalid_api_key').message).toMatch(/revoked/);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expectError(await t.as(t.key)('DELETE', `/v1/portal-sessions/${s.id}`), 404, 'resource_missing');
      expectError(await t.as(t.key)('DELETE', '/v1/portal-sessions/not-an-id'), 404, 'resource_missing');
    },
  );

  it(
    'a session ends with the key that made it: once the key is revoked ' +
      'its token is 401 saying so at once, on reads, writes and redeliver',
    async () => {
      const t = await tenant();
      const s = await session(t.key, { expires_in: 86400 });
      const api = t.as(s.token);
      const endpoint = await api('POST', '/v1/webhook-endpoints', {
        url: 'https://hooks.partner.example/before',
        events: ['*'],
      });
      expect(endpoint.status).toBe(201);
      const sent = await api('POST', `/v1/webhook-endpoints/${endpoint.json.id as string}/test`);
      expect(sent.status).toBe(202);
      const eventId = sent.json.id as string;
      // Another key's session of the same shop is not that key's to end.
      const other = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: ['webhooks:write'],
        write: true,
        mode: 'test',
      });
      const kept = await session(other.key);

      expect(await stack.deps.apiKeys.revoke(t.keyId, new Date().toISOString())).toMatchObject({ revoked: true });
      expectError(await t.as(t.key)('GET', '/v1/webhook-endpoints'), 401, 'invalid_api_key');
      for (const [method, path, body] of [
        ['GET', '/v1/webhook-endpoints', undefined],
        ['POST', '/v1/webhook-endpoints', { url: 'https://attacker.example/collect', events: ['*'] }],
        ['POST', `/v1/events/${eventId}/redeliver`, {}],
        ['GET', `/v1/events/${eventId}`, undefined],
      ] as const) {
        const refused = await api(method, path, body);
        expect([method, path, expectError(refused, 401, 'invalid_api_key').message]).toEqual([
          method,
          path,
          expect.stringMatching(
            /^This portal link was revoked at .*, with the API key that made it\. Ask for a new link\.$/,
          ),
        ]);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      const listed = await t.as(other.key)('GET', '/v1/webhook-endpoints');
      expect((listed.json.data as { url: string }[]).map((e) => e.url)).toEqual([
        'https://hooks.partner.example/before',
      ]);
      expect((await t.as(kept.token)('GET', '/v1/webhook-endpoints')).status).toBe(200);
    },
  );

  it(
    "GET lists the shop's live sessions newest first, with the key that made each " +
      "and never a token; deleted, expired and revoked keys' sessions are left out",
    async () => {
      const t = await tenant();
      const elsewhere = await tenant();
      await session(elsewhere.key);
      const older = await session(t.key, { read_only: true, expires_in: 600 });
      const newer = await session(t.key);
      const deleted = await session(t.key);
      expect((await t.as(t.key)('DELETE', `/v1/portal-sessions/${deleted.id}`)).status).toBe(200);
      const now = Date.now();
      await stack.deps.portalSessions.create({
        id: newId('ps', now),
        shop_id: t.shop.id,
        token_hash: hashKey(`pst_${'X'.repeat(40)}`),
        mode: 'test',
        read_only: false,
        shop_name: t.shop.name,
        issued_by: t.keyId,
        issuer_key_hash: hashKey(t.key),
        created_at: new Date(now - 120_000).toISOString(),
        valid_until: new Date(now - 60_000).toISOString(),
        revoked_at: null,
      });
      const gone = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: ['webhooks:write'],
        write: true,
        mode: 'test',
      });
      await session(gone.key);
      await stack.deps.apiKeys.revoke(gone.record.id, new Date().toISOString());

      const listed = await t.as(t.key)('GET', '/v1/portal-sessions');
      expect([listed.status, listed.json]).toEqual([
        200,
        {
          object: 'list',
          data: [newer, older].map((s) => ({
            object: 'portal_session',
            id: s.id,
            read_only: s.read_only,
            expires_at: s.expires_at,
            created_at: s.created_at,
            created_by: t.keyId,
          })),
          has_more: false,
          next_cursor: null,
        },
      ]);
      // No token as a value, no field that names one (ids are random: match whole JSON strings).
      expect(listed.text).not.toMatch(/"pst_|"[a-z_]*(token|hash)[a-z_]*":/);

      const first = await t.as(t.key)('GET', '/v1/portal-sessions?limit=1');
      expect([(first.json.data as { id: string }[]).map((s) => s.id), first.json.has_more]).toEqual([[newer.id], true]);
      const cursor = encodeURIComponent(first.json.next_cursor as string);
      const second = await t.as(t.key)('GET', `/v1/portal-sessions?limit=1&cursor=${cursor}`);
      expect([(second.json.data as { id: string }[]).map((s) => s.id), second.json.next_cursor]).toEqual([
        [older.id],
        null,
      ]);
      expectError(
        await elsewhere.as(elsewhere.key)('GET', `/v1/portal-sessions?cursor=${cursor}`),
        400,
        'invalid_cursor',
      );
      expect(expectError(await t.as(t.key)('GET', '/v1/portal-sessions?limit=0'), 400, 'parameter_invalid').param).toBe(
        'limit',
      );
      expect(
        expectError(await t.as(t.key)('GET', '/v1/portal-sessions?expired=true'), 400, 'parameter_unknown').param,
      ).toBe('expired');
    },
  );

  it(
    'GET needs webhooks:write: a webhooks:read key is 403 naming it; a key ' +
      'with it lists though not a write key (a GET, as the contract says)',
    async () => {
      const t = await tenant();
      const s = await session(t.key);
      const reader = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: ['webhooks:read'],
        write: true,
        mode: 'test',
      });
      expect(
        expectError(await t.as(reader.key)('GET', '/v1/portal-sessions'), 403, 'insufficient_scope').message,
      ).toContain("'webhooks:write'");
      const notWrite = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: ['webhooks:write'],
        write: false,
        mode: 'test',
      });
      const listed = await t.as(notWrite.key)('GET', '/v1/portal-sessions');
      expect([listed.status, (listed.json.data as { id: string }[]).map((x) => x.id)]).toEqual([200, [s.id]]);
    },
  );

  it(
    'an expired session is 401 saying it expired (a session written ' +
      'with an expiry in the past: the minimum expires_in is 60 s)',
    async () => {
      const t = await tenant();
      const token = `pst_${'E'.repeat(40)}`;
      const now = Date.now();
      const record: PortalSessionRecord = {
        id: newId('ps', now - 120_000),
        shop_id: t.shop.id,
        token_hash: hashKey(token),
        mode: 'test',
        read_only: false,
        shop_name: t.shop.name,
        issued_by: null,
        issuer_key_hash: null,
        created_at: new Date(now - 120_000).toISOString(),
        valid_until: new Date(now - 60_000).toISOString(),
        revoked_at: null,
      };
      await stack.deps.portalSessions.create(record);
      expect(expectError(await t.as(token)('GET', '/v1/webhook-endpoints'), 401, 'invalid_api_key').message).toMatch(
        `expired at ${record.valid_until}`,
      );
    },
  );

  it(
    'the body is validated (400 naming the field); a read-only key is 403 ' +
      'write_key_required; a webhooks:read key 403 naming webhooks:write',
    async () => {
      const t = await tenant();
      for (const [body, code, param] of [
        [{ expires_in: 59 }, 'parameter_invalid', 'expires_in'],
        [{ expires_in: 86401 }, 'parameter_invalid', 'expires_in'],
        [{ expires_in: 'soon' }, 'parameter_invalid', 'expires_in'],
        [{ read_only: 'yes' }, 'parameter_invalid', 'read_only'],
        [{ readonly: true }, 'parameter_unknown', 'readonly'],
      ] as const) {
        expect(expectError(await t.as(t.key)('POST', '/v1/portal-sessions', body), 400, code).param).toBe(param);
      }
      const readOnlyKey = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: [...SCOPES],
        write: false,
        mode: 'test',
      });
      expectError(await t.as(readOnlyKey.key)('POST', '/v1/portal-sessions'), 403, 'write_key_required');
      const reader = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: ['webhooks:read'],
        write: true,
        mode: 'test',
      });
      expect(
        expectError(await t.as(reader.key)('POST', '/v1/portal-sessions'), 403, 'insufficient_scope').message,
      ).toContain("'webhooks:write'");
    },
  );

  it(
    'Idempotency-Key replays the created session byte ' + 'for byte while it lives, and 404 once it is deleted',
    async () => {
      const t = await tenant();
      const headers = { 'idempotency-key': 'portal-link-for-support-ticket-1' };
      const first = await t.as(t.key)('POST', '/v1/portal-sessions', { read_only: true }, headers);
      const again = await t.as(t.key)('POST', '/v1/portal-sessions', { read_only: true }, headers);
      expect([first.status, again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([
        201,
        201,
        first.text,
        'true',
      ]);
      expectError(
        await t.as(t.key)('POST', '/v1/portal-sessions', { read_only: false }, headers),
        422,
        'idempotency_key_reused',
      );
      await t.as(t.key)('DELETE', `/v1/portal-sessions/${first.json.id as string}`);
      expectError(
        await t.as(t.key)('POST', '/v1/portal-sessions', { read_only: true }, headers),
        404,
        'resource_missing',
      );
    },
  );

  it(
    'a webhooks:read key reads endpoints, deliveries, stats and ' +
      'events, and every webhook write is 403 naming webhooks:write',
    async () => {
      const t = await tenant();
      const endpoint = (
        await t.as(t.key)('POST', '/v1/webhook-endpoints', { url: 'https://hooks.partner.example/read', events: ['*'] })
      ).json.id as string;
      const { key } = await issueKey(stack.deps.apiKeys, {
        shopId: t.shop.id,
        scopes: ['webhooks:read'],
        write: true,
        mode: 'test',
      });
      const api = t.as(key);
      for (const path of [
        '/v1/webhook-endpoints',
        `/v1/webhook-endpoints/${endpoint}`,
        `/v1/webhook-endpoints/${endpoint}/deliveries`,
        `/v1/webhook-endpoints/${endpoint}/stats`,
        '/v1/events',
      ]) {
        expect([path, (await api('GET', path)).status]).toEqual([path, 200]);
      }
      for (const [method, path, body] of [
        ['POST', '/v1/webhook-endpoints', { url: 'https://x.example/b', events: ['*'] }],
        ['PATCH', `/v1/webhook-endpoints/${endpoint}`, { enabled: false }],
        ['DELETE', `/v1/webhook-endpoints/${endpoint}`, undefined],
        ['POST', `/v1/webhook-endpoints/${endpoint}/test`, undefined],
        ['POST', `/v1/webhook-endpoints/${endpoint}/recover`, { since: new Date(Date.now() - 60_000).toISOString() }],
      ] as const) {
        expect([method, path, expectError(await api(method, path, body), 403, 'insufficient_scope').message]).toEqual([
          method,
          path,
          expect.stringContaining("'webhooks:write'"),
        ]);
      }
      expect(expectError(await api('GET', '/v1/calls'), 403, 'insufficient_scope').message).toContain("'calls:read'");
    },
  );
});
