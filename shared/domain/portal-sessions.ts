import { AppError, notFound } from '../errors';
import { isId, newId } from '../ids';
import { hashKey, randomToken, type ApiKeyStore, type AuthOutcome, type KeyMode, type Principal } from './api-keys';
import type { Page, PageRequest } from './pagination';
import type { PortalSessionInput } from './portal-sessions-schema';
import type { Resource } from './resources';
import type { ShopStore } from './shop';

/**
 * Portal sessions (docs/api.md, Portal sessions): a short-lived Bearer token for one shop's
 * webhook portal, so nobody has to paste a key that can also approve jobs or rewrite the
 * shop. What the token may call is the route table's `portalSession` flag; this module
 * issues, revokes and recognises tokens.
 */
export interface PortalSessionRecord {
  id: string;
  shop_id: string;
  /** SHA-256 of the token, as for keys: the clear token is never stored. */
  token_hash: string;
  /** The issuing key's mode: the token's rate limit is that mode's. */
  mode: KeyMode;
  read_only: boolean;
  /** The shop's name when the session was made: what the portal shows (the token cannot read the shop). */
  shop_name: string;
  /** The key that made it; null when an operator made it with the CLI. */
  issued_by: string | null;
  /**
   * That key's SHA-256, the address of its item: the authorizer reads the key's status by it
   * (strongly consistent) on each request; null with `issued_by`.
   */
  issuer_key_hash: string | null;
  created_at: string;
  /** When the token stops working (the contract's `expires_at`). */
  valid_until: string;
  revoked_at: string | null;
}

export interface PortalSessionStore {
  create(record: PortalSessionRecord): Promise<void>;
  getByHash(tokenHash: string): Promise<PortalSessionRecord | null>;
  /** The shop's live (not deleted) session of that id. */
  get(shopId: string, id: string): Promise<PortalSessionRecord | null>;
  /** A page of the shop's sessions, newest first: not deleted, not expired at `now` (their keys unchecked). */
  list(shopId: string, page: PageRequest, now: string): Promise<Page<PortalSessionRecord>>;
  /** Revokes the token at once; false when the shop has no such session left to delete. */
  revoke(shopId: string, id: string, at: string): Promise<boolean>;
}

export interface PortalSessionDeps {
  portalSessions: PortalSessionStore;
  shops: Pick<ShopStore, 'get'>;
  now: () => Date;
}

/** How a session's issuing key is read: by the hash the session recorded. */
type IssuerKeys = Pick<ApiKeyStore, 'getByHash'>;

const DEFAULT_EXPIRES_IN = 3600;
const TOKEN_PATTERN = /^pst_[0-9A-Za-z]{40}$/;

/** Whether a presented Bearer value has the shape of a session token (not whether it works). */
export const isSessionToken = (value: string): boolean => TOKEN_PATTERN.test(value);

/** Who asks for a session: the calling key (or, from the CLI, an operator with a mode of their choosing). */
interface Issuer {
  shopId: string;
  mode: KeyMode;
  /** The calling key's id and SHA-256 (Principal's `keyId` and `keyHash`); null for an operator. */
  key: { id: string; hash: string } | null;
}

/** Makes a session and answers it with its token and link: the one time the token exists outside the caller. */
export async function createPortalSession(
  deps: PortalSessionDeps,
  issuer: Issuer,
  input: PortalSessionInput,
  baseUrl: string,
): Promise<Resource<'portalSessionWithToken'>> {
  const shop = await deps.shops.get(issuer.shopId);
  if (!shop) throw notFound('shop', issuer.shopId);
  const now = deps.now();
  const token = `pst_${randomToken()}`;
  const record: PortalSessionRecord = {
    id: newId('ps', now.getTime()),
    shop_id: shop.id,
    token_hash: hashKey(token),
    mode: issuer.mode,
    read_only: input.read_only ?? false,
    shop_name: shop.name,
    issued_by: issuer.key?.id ?? null,
    issuer_key_hash: issuer.key?.hash ?? null,
    created_at: now.toISOString(),
    valid_until: new Date(now.getTime() + (input.expires_in ?? DEFAULT_EXPIRES_IN) * 1000).toISOString(),
    revoked_at: null,
  };
  await deps.portalSessions.create(record);
  return {
    object: 'portal_session',
    id: record.id,
    read_only: record.read_only,
    expires_at: record.valid_until,
    created_at: record.created_at,
    token,
    url: `${baseUrl.replace(/\/+$/, '')}/portal#token=${token}`,
  };
}

/** A session as the list shows it: never its token (never stored) nor its hash. */
const toPortalSessionResource = (r: PortalSessionRecord): Resource<'portalSession'> => ({
  object: 'portal_session',
  id: r.id,
  read_only: r.read_only,
  expires_at: r.valid_until,
  created_at: r.created_at,
  created_by: r.issued_by,
});

/**
 * Why the key that made the session no longer vouches for it (revoked, or gone); null while it
 * does, and for an operator's session, which no key made.
 *
 * A session ends with its key by this check on every use, not by revoking the key's sessions
 * along with it: revoking stays one conditional write to the key's item, so a crash cannot
 * leave it half done, a session made while the key is being revoked cannot escape it, and a
 * key with any number of sessions ends them all at once. The price is one more strongly
 * consistent GetItem per request with a key's session token (an operator's session has none).
 */
async function issuerRefusal(keys: IssuerKeys, r: PortalSessionRecord): Promise<string | null> {
  if (r.issuer_key_hash === null) return null;
  const key = await keys.getByHash(r.issuer_key_hash);
  if (!key) return 'This portal link is not valid: the API key that made it no longer exists. Ask for a new link.';
  if (!key.revoked) return null;
  const when = key.revoked_at === null ? '' : ` at ${key.revoked_at}`;
  return `This portal link was revoked${when}, with the API key that made it. Ask for a new link.`;
}

/**
 * GET: a page of the shop's live sessions, newest first: not deleted, not expired, and made by a
 * key that is not revoked (or by an operator). Pages are read until `limit` live ones are found
 * or the sessions run out, so the cursor resumes right after the last session examined. `next`
 * says sessions remain, not that their keys are live: rarely the page after is empty.
 */
export async function listPortalSessions(
  deps: Pick<PortalSessionDeps, 'portalSessions' | 'now'> & { apiKeys: IssuerKeys },
  shopId: string,
  page: PageRequest,
): Promise<Page<Resource<'portalSession'>>> {
  const now = deps.now().toISOString();
  // One read per issuing key, however many of its sessions the pages hold.
  const verdicts = new Map<string, Promise<string | null>>();
  const refusal = (r: PortalSessionRecord) => {
    const issuer = r.issued_by ?? '';
    const known = verdicts.get(issuer) ?? issuerRefusal(deps.apiKeys, r);
    verdicts.set(issuer, known);
    return known;
  };
  const items: Resource<'portalSession'>[] = [];
  let after = page.after;
  do {
    const got = await deps.portalSessions.list(shopId, { limit: page.limit - items.length, after }, now);
    const refused = await Promise.all(got.items.map(refusal));
    items.push(...got.items.filter((_, i) => refused[i] === null).map(toPortalSessionResource));
    after = got.next;
  } while (after && items.length < page.limit);
  return { items, next: after };
}

/** DELETE: the token stops working at once; a second DELETE (or another shop's id) is 404. */
export async function deletePortalSession(
  deps: Pick<PortalSessionDeps, 'portalSessions' | 'now'>,
  shopId: string,
  id: string,
): Promise<Resource<'deletedPortalSession'>> {
  if (!isId('ps', id) || !(await deps.portalSessions.revoke(shopId, id, deps.now().toISOString())))
    throw notFound('portal session', id);
  return { id, object: 'portal_session', deleted: true };
}

/**
 * A replayed create (same Idempotency-Key) hands its token out again only while that session
 * is still there and unexpired: a client must not take a dead session's token for a live one.
 */
export async function checkReplayedSession(
  deps: Pick<PortalSessionDeps, 'portalSessions' | 'now'>,
  shopId: string,
  body: unknown,
): Promise<void> {
  const id = (body as { id?: unknown } | null)?.id;
  if (typeof id !== 'string') throw new Error('a stored portal session answer without an id');
  const session = await deps.portalSessions.get(shopId, id);
  if (!session) {
    throw new AppError(
      'resource_missing',
      `The portal session this Idempotency-Key created ('${id}') has been deleted. To make ` +
        `another, use a new Idempotency-Key.`,
    );
  }
  if (Date.parse(session.valid_until) <= deps.now().getTime()) {
    throw new AppError(
      'resource_missing',
      `The portal session this Idempotency-Key created ('${id}') has expired. To make another, ` +
        `use a new Idempotency-Key.`,
    );
  }
}

const refused = (message: string): AuthOutcome => ({ ok: false, code: 'invalid_api_key', message });

/**
 * The authorizer's verdict on a session token (looked up by its hash): its principal, or a
 * 401 that says why (deleted, expired, or its key revoked). A full session has both webhook
 * scopes and writes; a read-only one only `webhooks:read`, so a write is the scope's 403. The
 * route table keeps it to the portal's routes.
 */
export async function lookUpSession(
  deps: { portalSessions: Pick<PortalSessionStore, 'getByHash'>; apiKeys: IssuerKeys },
  tokenHash: string,
  nowMs: number,
): Promise<AuthOutcome> {
  const record = await deps.portalSessions.getByHash(tokenHash);
  if (!record)
    return refused('This portal link is not valid: it may have expired or been revoked. Ask for a new link.');
  if (record.revoked_at !== null)
    return refused(`This portal link was revoked at ${record.revoked_at}. Ask for a new link.`);
  if (Date.parse(record.valid_until) <= nowMs)
    return refused(`This portal link expired at ${record.valid_until}. Ask for a new link.`);
  const issuer = await issuerRefusal(deps.apiKeys, record);
  if (issuer !== null) return refused(issuer);
  const principal: Principal = {
    shopId: record.shop_id,
    keyId: record.id,
    keyHash: tokenHash,
    mode: record.mode,
    scopes: record.read_only ? ['webhooks:read'] : ['webhooks:read', 'webhooks:write'],
    write: !record.read_only,
    keyCreatedAt: record.created_at,
    session: { id: record.id, expiresAt: record.valid_until, readOnly: record.read_only, shopName: record.shop_name },
  };
  return { ok: true, principal };
}
