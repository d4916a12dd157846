import type { ApiKeyRecord, Principal } from '../../shared/domain/api-keys';
import { hashKey } from '../../shared/domain/api-keys';
import type { PageRequest } from '../../shared/domain/pagination';
import {
  checkReplayedSession,
  createPortalSession,
  deletePortalSession,
  listPortalSessions,
  lookUpSession,
  type PortalSessionRecord,
  type PortalSessionStore,
} from '../../shared/domain/portal-sessions';
import { createPortalSessionBody } from '../../shared/domain/portal-sessions-schema';
import { AppError } from '../../shared/errors';
import { scopeRefusal } from '../../shared/http/middleware';
import { parseOrThrow } from '../../shared/http/validation';
import { routeById } from '../../shared/routes';

const SHOP = 'shop_01jd0000000000000000000000';
const NOW = new Date('2026-11-23T12:00:00.000Z');

class MemorySessions implements PortalSessionStore {
  readonly byHash = new Map<string, PortalSessionRecord>();
  async create(r: PortalSessionRecord) {
    this.byHash.set(r.token_hash, r);
  }
  async getByHash(h: string) {
    return this.byHash.get(h) ?? null;
  }
  async get(shopId: string, id: string) {
    return [...this.byHash.values()].find((r) => r.shop_id === shopId && r.id === id && r.revoked_at === null) ?? null;
  }
  async revoke(shopId: string, id: string, at: string) {
    const r = await this.get(shopId, id);
    if (!r) return false;
    r.revoked_at = at;
    return true;
  }
  /** Newest first, `after` the position `{ id }` of the last one given; the deleted and the expired left out. */
  async list(shopId: string, page: PageRequest, now: string) {
    const all = [...this.byHash.values()]
      .filter((r) => r.shop_id === shopId && r.revoked_at === null && r.valid_until > now)
      .sort((a, b) => (a.id < b.id ? 1 : -1));
    const after = page.after?.id as string | undefined;
    const rest = after === undefined ? all : all.filter((r) => r.id < after);
    const items = rest.slice(0, page.limit);
    const last = items[items.length - 1];
    return { items, next: rest.length > page.limit && last ? { id: last.id } : undefined };
  }
}

/** Keys by hash, as the authorizer reads them. */
class MemoryKeys {
  readonly byHash = new Map<string, ApiKeyRecord>();
  reads = 0;
  add(id: string, revokedAt: string | null = null) {
    const hash = hashKey(id);
    this.byHash.set(hash, {
      id,
      shop_id: SHOP,
      key_hash: hash,
      mode: 'test',
      scopes: ['webhooks:write'],
      write: true,
      revoked: revokedAt !== null,
      created_at: '2026-11-01T00:00:00.000Z',
      revoked_at: revokedAt,
    });
    return { id, hash };
  }
  async getByHash(h: string) {
    this.reads++;
    return this.byHash.get(h) ?? null;
  }
}

function deps() {
  const portalSessions = new MemorySessions();
  const apiKeys = new MemoryKeys();
  apiKeys.add(KEY.id);
  const shops = {
    get: async (id: string) => (id === SHOP ? ({ id: SHOP, name: 'Ace Plumbing & Sons' } as never) : null),
  };
  return { portalSessions, apiKeys, shops, now: () => NOW };
}

const KEY = { id: 'key_01jd0000000000000000000000', hash: hashKey('key_01jd0000000000000000000000') };
const issuer = { shopId: SHOP, mode: 'test' as const, key: KEY };

describe('portal sessions: issuing, revoking, recognising', () => {
  it('issues a pst_ token shown once, a link with it in the fragment, and stores only its hash', async () => {
    const d = deps();
    const s = await createPortalSession(d, issuer, {}, 'https://api.example.test/');
    expect(s).toEqual({
      object: 'portal_session',
      id: expect.stringMatching(/^ps_[0-9a-z]{26}$/),
      token: expect.stringMatching(/^pst_[0-9A-Za-z]{40}$/),
      url: `https://api.example.test/portal#token=${s.token}`,
      read_only: false,
      expires_at: '2026-11-23T13:00:00.000Z',
      created_at: NOW.toISOString(),
    });
    const [stored] = [...d.portalSessions.byHash.values()];
    expect(stored).toMatchObject({
      token_hash: hashKey(s.token),
      shop_name: 'Ace Plumbing & Sons',
      mode: 'test',
      issued_by: KEY.id,
      issuer_key_hash: KEY.hash,
    });
    expect(JSON.stringify(stored)).not.toContain(s.token);
  });

  it(
    'a replayed create gives the token again only while its ' + 'session is live: not once deleted, not once expired',
    async () => {
      const d = deps();
      const s = await createPortalSession(d, issuer, { expires_in: 60 }, 'https://api.example.test');
      await expect(checkReplayedSession(d, SHOP, s)).resolves.toBeUndefined();
      const later = { ...d, now: () => new Date(NOW.getTime() + 61_000) };
      await expect(checkReplayedSession(later, SHOP, s)).rejects.toMatchObject({
        code: 'resource_missing',
        message: expect.stringContaining('has expired'),
      });
      await d.portalSessions.revoke(SHOP, s.id, NOW.toISOString());
      await expect(checkReplayedSession(d, SHOP, s)).rejects.toMatchObject({
        code: 'resource_missing',
        message: expect.stringContaining('has been deleted'),
      });
    },
  );

  it('honours expires_in and read_only', async () => {
    const s = await createPortalSession(deps(), issuer, { expires_in: 60, read_only: true }, 'http://127.0.0.1:3000');
    expect([s.expires_at, s.read_only]).toEqual(['2026-11-23T12:01:00.000Z', true]);
  });

  it.each([
    [{ expires_in: 59 }, 'expires_in'],
    [{ expires_in: 86401 }, 'expires_in'],
    [{ expires_in: 120.5 }, 'expires_in'],
    [{ expires_in: '3600' }, 'expires_in'],
    [{ read_only: 'yes' }, 'read_only'],
    [{ readonly: true }, 'readonly'],
  ])('refuses the body %j with a 400 naming %s', (body, param) => {
    try {
      parseOrThrow(createPortalSessionBody, body);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).options.param).toBe(param);
      expect((err as AppError).message).toMatch(param === 'expires_in' ? /60 to 86400/ : /./);
    }
  });

  it("delete revokes at once; a second delete, a malformed id and another shop's id are 404", async () => {
    const d = deps();
    const s = await createPortalSession(d, issuer, {}, 'https://api.example.test');
    expect(await deletePortalSession(d, SHOP, s.id)).toEqual({ id: s.id, object: 'portal_session', deleted: true });
    expect((await lookUpSession(d, hashKey(s.token), NOW.getTime())) as unknown).toMatchObject({
      ok: false,
      code: 'invalid_api_key',
      message: expect.stringMatching(/revoked/),
    });
    for (const [shop, id] of [
      [SHOP, s.id],
      [SHOP, 'ps_nope'],
      ['shop_01jd0000000000000000000001', s.id],
    ] as const) {
      await expect(deletePortalSession(d, shop, id)).rejects.toMatchObject({ code: 'resource_missing' });
    }
  });

  it('a token works until its expires_at, then is 401 saying it expired', async () => {
    const d = deps();
    const s = await createPortalSession(d, issuer, { expires_in: 60 }, 'https://api.example.test');
    const at = (ms: number) => lookUpSession(d, hashKey(s.token), NOW.getTime() + ms);
    expect(await at(59_999)).toMatchObject({
      ok: true,
      principal: {
        shopId: SHOP,
        scopes: ['webhooks:read', 'webhooks:write'],
        write: true,
        session: { shopName: 'Ace Plumbing & Sons', readOnly: false },
      },
    });
    expect(await at(60_000)).toMatchObject({
      ok: false,
      code: 'invalid_api_key',
      message: expect.stringMatching(/expired at 2026-11-23T12:01:00.000Z/),
    });
  });

  it(
    'ends with its key: once the key that made it is revoked, ' + "401 saying so; an operator's session reads no key",
    async () => {
      const d = deps();
      const s = await createPortalSession(d, issuer, {}, 'https://api.example.test');
      const operator = await createPortalSession(d, { ...issuer, key: null }, {}, 'https://api.example.test');
      expect(await lookUpSession(d, hashKey(s.token), NOW.getTime())).toMatchObject({ ok: true });
      d.apiKeys.add(KEY.id, '2026-11-23T12:00:05.000Z');
      expect(await lookUpSession(d, hashKey(s.token), NOW.getTime())).toEqual({
        ok: false,
        code: 'invalid_api_key',
        message:
          'This portal link was revoked at 2026-11-23T12:00:05.000Z, with the API key that made it. ' +
          'Ask for a new link.',
      });
      const reads = d.apiKeys.reads;
      expect(await lookUpSession(d, hashKey(operator.token), NOW.getTime())).toMatchObject({ ok: true });
      expect(d.apiKeys.reads).toBe(reads);
    },
  );

  it('a session whose key is gone is refused', async () => {
    const d = deps();
    const s = await createPortalSession(d, issuer, {}, 'https://api.example.test');
    d.apiKeys.byHash.clear();
    expect(await lookUpSession(d, hashKey(s.token), NOW.getTime())).toMatchObject({
      ok: false,
      message: expect.stringMatching(/no longer exists/),
    });
  });
});

describe('listing portal sessions', () => {
  const page = (limit: number, after?: Record<string, unknown>): PageRequest => ({ limit, after });

  it('lists the live ones newest first with the key that made each, never a token or its hash', async () => {
    const d = deps();
    const first = await createPortalSession(d, issuer, { read_only: true }, 'https://api.example.test');
    const later = { ...d, now: () => new Date(NOW.getTime() + 1000) };
    const second = await createPortalSession(later, { ...issuer, key: null }, {}, 'https://api.example.test');
    const listed = await listPortalSessions(later, SHOP, page(20));
    expect(listed).toEqual({
      items: [
        {
          object: 'portal_session',
          id: second.id,
          read_only: false,
          expires_at: second.expires_at,
          created_at: second.created_at,
          created_by: null,
        },
        {
          object: 'portal_session',
          id: first.id,
          read_only: true,
          expires_at: first.expires_at,
          created_at: first.created_at,
          created_by: KEY.id,
        },
      ],
      next: undefined,
    });
    // No token as a value, no field that names one (ids are random: match whole JSON strings).
    expect(JSON.stringify(listed)).not.toMatch(/"pst_|"[a-z_]*(token|hash)[a-z_]*":/);
    expect(await listPortalSessions(d, 'shop_01jd0000000000000000000001', page(20))).toEqual({
      items: [],
      next: undefined,
    });
  });

  it(
    'leaves out the deleted, the expired and those of a revoked ' +
      'key, reading each key once, and still fills the page',
    async () => {
      const d = deps();
      const revoked = d.apiKeys.add('key_01jd0000000000000000000009', '2026-11-23T11:00:00.000Z');
      const at = (ms: number) => ({ ...d, now: () => new Date(NOW.getTime() + ms) });
      const make = (ms: number, key = KEY, body = {}) =>
        createPortalSession(at(ms), { ...issuer, key }, body, 'https://api.example.test');
      const kept = [await make(1), await make(2)];
      for (let i = 3; i < 8; i++) await make(i, revoked);
      const deleted = await make(8);
      await deletePortalSession(d, SHOP, deleted.id);
      await make(9, KEY, { expires_in: 60 });
      const newest = await make(10);
      const later = at(60_010);
      const one = await listPortalSessions(later, SHOP, page(2));
      expect(one.items.map((s) => s.id)).toEqual([newest.id, kept[1]?.id]);
      const two = await listPortalSessions(later, SHOP, page(2, one.next));
      expect([two.items.map((s) => s.id), two.next]).toEqual([[kept[0]?.id], undefined]);
      d.apiKeys.reads = 0;
      expect((await listPortalSessions(later, SHOP, page(100))).items).toHaveLength(3);
      expect(d.apiKeys.reads).toBe(2);
    },
  );
});

describe("what a caller may call (the route middleware's scope decision)", () => {
  const key = (scopes: Principal['scopes'], write = true): Principal => ({
    shopId: SHOP,
    keyId: 'key_1',
    keyHash: 'a'.repeat(64),
    mode: 'test',
    scopes,
    write,
    keyCreatedAt: NOW.toISOString(),
  });
  const session = (readOnly: boolean): Principal => ({
    ...key(readOnly ? ['webhooks:read'] : ['webhooks:read', 'webhooks:write'], !readOnly),
    session: { id: 'ps_1', expiresAt: NOW.toISOString(), readOnly, shopName: 'Ace' },
  });

  it('webhooks:read allows the webhook GETs and refuses every webhook write, naming webhooks:write', () => {
    const reader = key(['webhooks:read'], false);
    for (const op of [
      'listWebhookEndpoints',
      'getWebhookEndpoint',
      'listWebhookEndpointDeliveries',
      'getWebhookEndpointStats',
      'getWebhookEndpointRecovery',
      'listEvents',
      'getEvent',
    ]) {
      expect([op, scopeRefusal(routeById(op), reader)]).toEqual([op, null]);
    }
    for (const op of [
      'createWebhookEndpoint',
      'updateWebhookEndpoint',
      'deleteWebhookEndpoint',
      'rotateWebhookEndpointSecret',
      'testWebhookEndpoint',
      'recoverWebhookEndpoint',
      'redeliverEvent',
      'createPortalSession',
    ]) {
      expect([op, scopeRefusal(routeById(op), reader)]).toEqual([op, expect.stringContaining("'webhooks:write'")]);
    }
    expect(scopeRefusal(routeById('listCalls'), reader)).toMatch(/'calls:read'/);
  });

  it('webhooks:write still allows the reads; a key with neither hears both names', () => {
    expect(scopeRefusal(routeById('listEvents'), key(['webhooks:write']))).toBeNull();
    expect(scopeRefusal(routeById('listEvents'), key(['calls:read']))).toMatch(/'webhooks:read' or 'webhooks:write'/);
  });

  it("a session token: the portal's operations only; a read-only one, their GETs only", () => {
    const full = session(false);
    const readOnly = session(true);
    for (const op of [
      'createWebhookEndpoint',
      'deleteWebhookEndpoint',
      'testWebhookEndpoint',
      'redeliverEvent',
      'listEvents',
    ])
      expect([op, scopeRefusal(routeById(op), full)]).toEqual([op, null]);
    for (const op of ['approveJob', 'listCalls', 'getShop', 'getMe', 'createPortalSession', 'deletePortalSession']) {
      expect([op, scopeRefusal(routeById(op), full)]).toEqual([
        op,
        expect.stringMatching(/portal session .* cannot call/),
      ]);
    }
    expect(scopeRefusal(routeById('listWebhookEndpoints'), readOnly)).toBeNull();
    expect(scopeRefusal(routeById('createWebhookEndpoint'), readOnly)).toMatch(/read-only.*'webhooks:write'/);
    expect(scopeRefusal(routeById('getMe'), readOnly)).toMatch(/cannot call GET \/v1\/me/);
  });
});
