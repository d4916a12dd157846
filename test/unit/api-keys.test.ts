import {
  authenticate,
  generateSecretKey,
  hashKey,
  parseScopes,
  type ApiKeyRecord,
  type ApiKeyStore,
} from '../../shared/domain/api-keys';

class MemoryKeys implements ApiKeyStore {
  readonly byHash = new Map<string, ApiKeyRecord>();
  async put(r: ApiKeyRecord) {
    this.byHash.set(r.key_hash, r);
  }
  async getByHash(h: string) {
    return this.byHash.get(h) ?? null;
  }
  async revoke() {
    return null;
  }
}

const record = (key: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: 'key_01jd0000000000000000000000',
  shop_id: 'shop_01jd0000000000000000000000',
  key_hash: hashKey(key),
  mode: 'test',
  scopes: ['settings:read'],
  write: false,
  revoked: false,
  created_at: '2026-11-21T00:00:00.000Z',
  revoked_at: null,
  ...overrides,
});

describe('API keys', () => {
  it('generates sk_<mode>_ + 40 base62 characters, never twice the same', () => {
    const keys = Array.from({ length: 200 }, () => generateSecretKey('live'));
    for (const k of keys) expect(k).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    expect(new Set(keys).size).toBe(200);
  });

  it('hashes with SHA-256', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it.each([undefined, '', 'Basic dXNlcjpwdw==', 'Bearer', 'Bearer    ', 'sk_test_abc'])(
    '%j → missing_api_key',
    async (header) => {
      const outcome = await authenticate(new MemoryKeys(), header);
      expect(outcome).toMatchObject({ ok: false, code: 'missing_api_key' });
    },
  );

  it.each([
    [undefined, /^No API key provided/],
    ['  ', /^No API key provided/],
    ['sk_test_abc', /must be "Bearer <API_KEY>": put "Bearer " before the key/],
    ['Bearer', /the key after "Bearer" is missing/],
    ['Bearer sk_test_a sk_test_b', /one space, then the key alone/],
    ['Basic dXNlcjpwdw==', /must be "Bearer <API_KEY>", not "Basic …"/],
    ['Token abc', /not "Token …"/],
  ])('%j says what is wrong with the header', async (header, message) => {
    const outcome = await authenticate(new MemoryKeys(), header);
    expect(outcome).toMatchObject({ ok: false, code: 'missing_api_key', message: expect.stringMatching(message) });
    // The credential is never repeated back.
    for (const secret of ['abc', 'dXNlcjpwdw', 'sk_test_a'])
      expect((outcome as { message: string }).message).not.toContain(secret);
  });

  it('refuses malformed, unknown and revoked keys as invalid_api_key', async () => {
    const store = new MemoryKeys();
    const good = generateSecretKey('test');
    const revoked = generateSecretKey('test');
    await store.put(record(good));
    await store.put(record(revoked, { revoked: true, key_hash: hashKey(revoked) }));
    for (const header of [
      'Bearer sk_test_short',
      'Bearer pk_test_' + 'a'.repeat(40),
      `Bearer ${generateSecretKey('test')}`,
    ]) {
      expect(await authenticate(store, header)).toMatchObject({ ok: false, code: 'invalid_api_key' });
    }
    expect(await authenticate(store, `Bearer ${revoked}`)).toMatchObject({
      ok: false,
      code: 'invalid_api_key',
      message: expect.stringMatching(/revoked/),
    });
    expect(await authenticate(store, `bearer ${good}`)).toMatchObject({
      ok: true,
      principal: { scopes: ['settings:read'], write: false },
    });
  });

  it('parses scope lists', () => {
    expect(parseScopes('all')).toHaveLength(8);
    expect(parseScopes('webhooks:read')).toEqual(['webhooks:read']);
    expect(parseScopes('calls:read, jobs:read,calls:read')).toEqual(['calls:read', 'jobs:read']);
    expect(() => parseScopes('calls:read,calls:write')).toThrow(/calls:write/);
  });
});
