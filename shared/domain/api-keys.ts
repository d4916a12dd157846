import { createHash, randomBytes } from 'node:crypto';
import { SCOPES, type Scope } from './scopes';
import { newId } from '../ids';

export type KeyMode = 'test' | 'live';

/** What the store keeps of a key: never the clear key, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  shop_id: string;
  key_hash: string;
  mode: KeyMode;
  scopes: Scope[];
  write: boolean;
  revoked: boolean;
  created_at: string;
  revoked_at: string | null;
}

export interface ApiKeyStore {
  put(record: ApiKeyRecord): Promise<void>;
  getByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** Marks the key revoked; null when no key has that id. */
  revoke(keyId: string, at: string): Promise<ApiKeyRecord | null>;
}

/** The authenticated caller, as the authorizer hands it to every operation. */
export interface Principal {
  shopId: string;
  keyId: string;
  /** SHA-256 of the credential presented (the key, or a portal session's token): how the store finds it. */
  keyHash: string;
  mode: KeyMode;
  scopes: Scope[];
  write: boolean;
  keyCreatedAt: string;
  /** Set when the caller holds a portal session's token rather than a key (./portal-sessions.ts). */
  session?: SessionFacts;
}

/** What the portal page may learn about the session it runs in (answered in headers, shared/http/handler.ts). */
interface SessionFacts {
  id: string;
  expiresAt: string;
  readOnly: boolean;
  shopName: string;
}

export type AuthOutcome =
  { ok: true; principal: Principal } | { ok: false; code: 'missing_api_key' | 'invalid_api_key'; message: string };

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_LENGTH = 40; // ~238 bits
const KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32,128}$/;

/** 40 base62 characters, drawn without modulo bias: the secret part of keys and portal session tokens. */
export function randomToken(): string {
  let token = '';
  while (token.length < TOKEN_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && token.length < TOKEN_LENGTH) token += BASE62[byte % 62];
    }
  }
  return token;
}

/** `sk_<mode>_<40 base62>`. */
export function generateSecretKey(mode: KeyMode): string {
  return `sk_${mode}_${randomToken()}`;
}

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export function parseScopes(value: string): Scope[] {
  if (value === 'all') return [...SCOPES];
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0 || scopes.length === 0) {
    throw new Error(`Unknown scope(s) ${unknown.join(', ') || '(none given)'}; known: ${SCOPES.join(', ')}, or all`);
  }
  return [...new Set(scopes)] as Scope[];
}

export interface IssueKeyInput {
  shopId: string;
  scopes: Scope[];
  write: boolean;
  mode: KeyMode;
}

/** Creates a key and returns the clear key: the only moment it exists outside the caller. */
export async function issueKey(
  store: ApiKeyStore,
  input: IssueKeyInput,
  now: Date = new Date(),
): Promise<{ record: ApiKeyRecord; key: string }> {
  const key = generateSecretKey(input.mode);
  const record: ApiKeyRecord = {
    id: newId('key', now.getTime()),
    shop_id: input.shopId,
    key_hash: hashKey(key),
    mode: input.mode,
    scopes: input.scopes,
    write: input.write,
    revoked: false,
    created_at: now.toISOString(),
    revoked_at: null,
  };
  await store.put(record);
  return { record, key };
}

export type AuthFailure = Extract<AuthOutcome, { ok: false }>;

/** A well-formed key as presented: its SHA-256 (how the store finds it) and the mode its prefix names. */
export interface PresentedKey {
  ok: true;
  hash: string;
  mode: KeyMode;
}

const INVALID: AuthFailure = { ok: false, code: 'invalid_api_key', message: 'Invalid API key provided.' };

const BEARER_FORM = 'The Authorization header must be "Bearer <API_KEY>"';

/**
 * Why a header without a Bearer credential was refused. A header that is there but in another
 * form (the key alone, another scheme) is told so, not "no key": a pasted key without the word
 * `Bearer` is the usual first mistake. The credential itself is never echoed.
 */
function withoutBearer(authorization: string): string {
  const value = authorization.trim();
  if (value === '') return 'No API key provided. Send it as the header "Authorization: Bearer <API_KEY>".';
  if (/^sk_(test|live)_/i.test(value)) return `${BEARER_FORM}: put "Bearer " before the key.`;
  if (/^Bearer$/i.test(value)) return `${BEARER_FORM}: the key after "Bearer" is missing.`;
  if (/^Bearer\s/i.test(value)) return `${BEARER_FORM}: one space, then the key alone.`;
  const scheme = /^([A-Za-z][A-Za-z0-9_-]{0,19})\s/.exec(value)?.[1];
  return scheme ? `${BEARER_FORM}, not "${scheme} …".` : `${BEARER_FORM}.`;
}

/** The credential of an `Authorization: Bearer <credential>` header value, or undefined when it is not in that form. */
export const bearerCredential = (authorization: string | undefined): string | undefined =>
  /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '')?.[1];

/** Reads an `Authorization` header value: a well-formed key, or the contract's 401 code, with no lookup. */
export function presentedKey(authorization: string | undefined): PresentedKey | AuthFailure {
  const key = bearerCredential(authorization);
  if (key === undefined) return { ok: false, code: 'missing_api_key', message: withoutBearer(authorization ?? '') };
  const mode = KEY_PATTERN.exec(key)?.[1] as KeyMode | undefined;
  return mode ? { ok: true, hash: hashKey(key), mode } : INVALID;
}

/** Looks a presented key up: its principal, or the contract's 401 code (unknown, revoked). */
export async function lookUpKey(store: ApiKeyStore, presented: PresentedKey): Promise<AuthOutcome> {
  const record = await store.getByHash(presented.hash);
  if (!record) return INVALID;
  if (record.revoked) return { ...INVALID, message: 'This API key has been revoked.' };
  return {
    ok: true,
    principal: {
      shopId: record.shop_id,
      keyId: record.id,
      keyHash: record.key_hash,
      mode: record.mode,
      scopes: record.scopes,
      write: record.write,
      keyCreatedAt: record.created_at,
    },
  };
}

/** Resolves an `Authorization` header value to a principal, or the contract's 401 code. */
export async function authenticate(store: ApiKeyStore, authorization: string | undefined): Promise<AuthOutcome> {
  const presented = presentedKey(authorization);
  return presented.ok ? lookUpKey(store, presented) : presented;
}
