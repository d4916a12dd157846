import type { Principal } from '../../shared/domain/api-keys';
import { hashKey } from '../../shared/domain/api-keys';
import {
  checkReplayedSession,
  createPortalSession,
  deletePortalSession,
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
}

function deps() {
  const portalSessions = new MemorySessions();
  const shops = {
    get: async (id: string) => (id === SHOP ? ({ id: SHOP, name: 'Ace Plumbing & Sons' } as never) : null),
  };
  return { portalSessions, shops, now: () => NOW };
}

const issuer = { shopId: SHOP, mode: 'test' as const, keyId: 'key_01jd0000000000000000000000' };

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
      issued_by: issuer.keyId,
    });
    expect(JSON.stringify(stored)).not.toContain(s.token);
  });

  it('a replayed create gives the token again only while its session is live: not once deleted, not once expired', async () => {
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
  });

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
    expect((await lookUpSession(d.portalSessions, hashKey(s.token), NOW.getTime())) as unknown).toMatchObject({
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
    const at = (ms: number) => lookUpSession(d.portalSessions, hashKey(s.token), NOW.getTime() + ms);
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
});

describe("what a caller may call (the route middleware's scope decision)", () => {
  const key = (scopes: Principal['scopes'], write = true): Principal => ({
    shopId: SHOP,
    keyId: 'key_1',
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
