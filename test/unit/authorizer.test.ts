import { makeHandler } from '../../functions/authorizer';
import { generateSecretKey, hashKey, type ApiKeyRecord, type ApiKeyStore } from '../../shared/domain/api-keys';
import type { PortalSessionRecord } from '../../shared/domain/portal-sessions';
import {
  type Clock,
  failureBucket,
  keyBucket,
  limitOf,
  MemoryRateLimiter,
  type RateLimit,
  type RateLimits,
} from '../../shared/domain/rate-limits';

const LIMITS: RateLimits = { test: limitOf(25, 2), live: limitOf(100, 2), authFailures: limitOf(10, 2) };
/** The handler's clock stands still: the buckets refill only when a test says so. */
const T0 = Date.parse('2026-11-23T12:00:00.000Z');

/** A key store whose lookups wait until the test lets them answer. */
class HeldKeys implements ApiKeyStore {
  readonly records = new Map<string, ApiKeyRecord>();
  readonly waiting: (() => void)[] = [];
  /** Lookups that have answered so far. */
  answered = 0;
  failing = false;
  async put(r: ApiKeyRecord) {
    this.records.set(r.key_hash, r);
  }
  async getByHash(h: string) {
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.answered++;
    if (this.failing) throw new Error('table down');
    return this.records.get(h) ?? null;
  }
  async revoke() {
    return null;
  }
  answer() {
    this.waiting.splice(0).forEach((resolve) => resolve());
  }
}

/** Session lookups wait with the key store's: `keys.answer()` lets both answer. */
class HeldSessions {
  readonly records = new Map<string, PortalSessionRecord>();
  constructor(private readonly keys: HeldKeys) {}
  async getByHash(h: string) {
    await new Promise<void>((resolve) => this.keys.waiting.push(resolve));
    this.keys.answered++;
    return this.records.get(h) ?? null;
  }
}

/** The in-memory limiter, recording each take and whether the request's key lookup had answered by then. */
class RecordingLimiter extends MemoryRateLimiter {
  readonly takes: { bucket: string; limit: RateLimit; lookupPending: boolean }[] = [];
  /** `keys.answered` when the current request started. */
  answeredBefore = 0;
  failing = false;
  constructor(private readonly keys: HeldKeys) {
    super();
  }
  override async take(bucket: string, limit: RateLimit, clock: Clock) {
    this.takes.push({ bucket, limit, lookupPending: this.keys.answered === this.answeredBefore });
    if (this.failing) throw new Error('bucket store down');
    return super.take(bucket, limit, clock);
  }
}

const flush = () => new Promise((r) => setImmediate(r));

function setup() {
  const keys = new HeldKeys();
  const sessions = new HeldSessions(keys);
  const limiter = new RecordingLimiter(keys);
  const authorize = makeHandler(
    () => ({ apiKeys: keys, portalSessions: sessions, rateLimiter: limiter, rateLimits: LIMITS }),
    () => T0,
  );
  /** One request: started, its lookups let answer once they wait (one after another), its verdict returned. */
  const run = async (key: string, sourceIp = '198.51.100.7') => {
    limiter.answeredBefore = keys.answered;
    const verdict = authorize({ headers: { authorization: `Bearer ${key}` }, requestContext: { http: { sourceIp } } });
    let settled = false;
    const done = () => {
      settled = true;
    };
    verdict.then(done, done);
    while (!settled) {
      await flush();
      keys.answer();
    }
    return verdict;
  };
  return { keys, sessions, limiter, run };
}

async function issued(keys: HeldKeys, mode: 'test' | 'live', revoked = false) {
  const key = generateSecretKey(mode);
  await keys.put({
    id: 'key_01jd0000000000000000000000',
    shop_id: 'shop_01jd0000000000000000000000',
    key_hash: hashKey(key),
    mode,
    scopes: ['settings:read'],
    write: false,
    revoked,
    created_at: '2026-11-21T00:00:00.000Z',
    revoked_at: null,
  });
  return key;
}

describe('authorizer: the key lookup and the rate-limit take', () => {
  it(
    'a key seen to authenticate takes from its bucket (named by its hash, ' +
      'at its mode’s limit) while it is looked up; the first time, after',
    async () => {
      const { keys, limiter, run } = setup();
      const key = await issued(keys, 'live');
      const bucket = { bucket: keyBucket(hashKey(key)), limit: LIMITS.live };
      expect(await run(key)).toEqual({
        isAuthorized: true,
        context: expect.objectContaining({ authenticated: true, mode: 'live' }),
      });
      expect(limiter.takes).toEqual([{ ...bucket, lookupPending: false }]);
      expect(await run(key)).toEqual({
        isAuthorized: true,
        context: expect.objectContaining({ authenticated: true, mode: 'live' }),
      });
      expect(limiter.takes).toEqual([
        { ...bucket, lookupPending: false },
        { ...bucket, lookupPending: true },
      ]);
    },
  );

  it('over the key’s limit: authorized with rate_limited in the context, so the route answers 429', async () => {
    const { keys, run } = setup();
    const key = await issued(keys, 'test');
    const verdicts = [];
    for (let i = 0; i < LIMITS.test.burst + 1; i++) verdicts.push(await run(key));
    expect(verdicts.slice(0, -1).every((v) => v.isAuthorized && v.context.rate_limited === undefined)).toBe(true);
    expect(verdicts.at(-1)).toEqual({
      isAuthorized: true,
      context: expect.objectContaining({ authenticated: true, rate_limited: true, retry_after: '1' }),
    });
  });

  it(
    'an unknown, malformed or missing key takes from its source address’s bucket ' +
      'alone, never a key bucket; past that budget the request is refused outright',
    async () => {
      const { limiter, run } = setup();
      const verdicts = [];
      for (let i = 0; i < LIMITS.authFailures.burst; i++) verdicts.push(await run(generateSecretKey('test')));
      expect(verdicts.every((v) => v.isAuthorized && v.context.error_code === 'invalid_api_key')).toBe(true);
      expect(await run('sk_test_short')).toEqual({ isAuthorized: false, context: {} });
      expect(await run('')).toEqual({ isAuthorized: false, context: {} });
      // Within its budget, another address hears why: the contract's 401 codes.
      expect((await run('', '192.0.2.1')).context).toMatchObject({ error_code: 'missing_api_key' });
      expect((await run('sk_test_short', '192.0.2.1')).context).toMatchObject({ error_code: 'invalid_api_key' });
      expect(new Set(limiter.takes.map((t) => t.bucket))).toEqual(
        new Set([failureBucket('198.51.100.7'), failureBucket('192.0.2.1')]),
      );
      // Another address has a budget of its own.
      expect((await run(generateSecretKey('test'), '203.0.113.9')).isAuthorized).toBe(true);
    },
  );

  it(
    'a key revoked after it was seen: its early take is wasted on its ' +
      'own bucket, it answers 401, and it is looked up first from then on',
    async () => {
      const { keys, limiter, run } = setup();
      const key = await issued(keys, 'test');
      await run(key);
      keys.records.set(hashKey(key), { ...(keys.records.get(hashKey(key)) as ApiKeyRecord), revoked: true });
      limiter.takes.length = 0;
      expect(await run(key)).toEqual({
        isAuthorized: true,
        context: expect.objectContaining({
          authenticated: false,
          error_code: 'invalid_api_key',
          error_message: expect.stringMatching(/revoked/),
        }),
      });
      expect(limiter.takes.map((t) => [t.bucket, t.lookupPending])).toEqual([
        [keyBucket(hashKey(key)), true],
        [failureBucket('198.51.100.7'), false],
      ]);
      limiter.takes.length = 0;
      await run(key);
      expect(limiter.takes.map((t) => t.bucket)).toEqual([failureBucket('198.51.100.7')]);
    },
  );

  it('the bucket store failing lets the request through; the key store failing is the route’s 500', async () => {
    const { keys, limiter, run } = setup();
    const key = await issued(keys, 'test');
    limiter.failing = true;
    // On the first request (the take after the lookup) and once the key is known (the take beside it).
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true }) });
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true }) });
    expect(limiter.takes.map((t) => t.lookupPending)).toEqual([false, true]);
    keys.failing = true;
    expect(await run(key)).toEqual({
      isAuthorized: true,
      context: { authenticated: false, error_code: 'internal_error' },
    });
  });
});

describe('authorizer: portal session tokens', () => {
  const T = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();
  /** An operator's session (no key made it) unless `over` names the key. */
  function session(sessions: HeldSessions, over: Partial<PortalSessionRecord> = {}) {
    const token = `pst_${generateSecretKey('test').slice(-40)}`;
    const record: PortalSessionRecord = {
      id: 'ps_01jd0000000000000000000000',
      shop_id: 'shop_01jd0000000000000000000000',
      token_hash: hashKey(token),
      mode: 'live',
      read_only: false,
      shop_name: 'Ace Plumbing',
      issued_by: null,
      issuer_key_hash: null,
      created_at: T(-60_000),
      valid_until: T(3_600_000),
      revoked_at: null,
      ...over,
    };
    sessions.records.set(record.token_hash, record);
    return token;
  }

  it(
    'a valid token: the shop, both webhook scopes, writes, the session facts, ' +
      'and a bucket of its own at its issuing key’s mode (taken early once seen)',
    async () => {
      const { sessions, limiter, run } = setup();
      const token = session(sessions);
      const verdict = await run(token);
      expect(verdict).toEqual({
        isAuthorized: true,
        context: expect.objectContaining({
          authenticated: true,
          shop_id: 'shop_01jd0000000000000000000000',
          key_id: 'ps_01jd0000000000000000000000',
          mode: 'live',
          scopes: 'webhooks:read webhooks:write',
          write: true,
          session_id: 'ps_01jd0000000000000000000000',
          session_read_only: false,
          session_shop_name: 'Ace Plumbing',
          session_expires_at: T(3_600_000),
        }),
      });
      await run(token);
      expect(limiter.takes).toEqual([
        { bucket: keyBucket(hashKey(token)), limit: LIMITS.live, lookupPending: false },
        { bucket: keyBucket(hashKey(token)), limit: LIMITS.live, lookupPending: true },
      ]);
    },
  );

  it('a read-only token carries webhooks:read alone and no write', async () => {
    const { sessions, run } = setup();
    const verdict = await run(session(sessions, { read_only: true, mode: 'test' }));
    expect(verdict.context).toMatchObject({
      authenticated: true,
      scopes: 'webhooks:read',
      write: false,
      session_read_only: true,
      mode: 'test',
    });
  });

  it.each([
    ['expired', { valid_until: T(0) }, /expired at 2026-11-23T12:00:00.000Z/],
    ['revoked', { revoked_at: T(-1000) }, /revoked/],
  ])(
    'an %s token is 401 invalid_api_key saying so, and takes from the address’s bucket',
    async (_what, over, message) => {
      const { sessions, limiter, run } = setup();
      const verdict = await run(session(sessions, over));
      expect(verdict).toEqual({
        isAuthorized: true,
        context: { authenticated: false, error_code: 'invalid_api_key', error_message: expect.stringMatching(message) },
      });
      expect(limiter.takes.map((t) => t.bucket)).toEqual([failureBucket('198.51.100.7')]);
    },
  );

  it(
    'a key’s session ends with the key: the request after the ' +
      'revocation is 401 saying so, though the token was seen',
    async () => {
      const { keys, sessions, limiter, run } = setup();
      const key = await issued(keys, 'live');
      const token = session(sessions, { issued_by: 'key_01jd0000000000000000000000', issuer_key_hash: hashKey(key) });
      expect((await run(token)).context).toMatchObject({
        authenticated: true,
        key_id: 'ps_01jd0000000000000000000000',
      });
      expect((await run(token)).context).toMatchObject({ authenticated: true });
      const record = keys.records.get(hashKey(key)) as ApiKeyRecord;
      keys.records.set(hashKey(key), { ...record, revoked: true, revoked_at: T(-5) });
      limiter.takes.length = 0;
      expect((await run(token)).context).toEqual({
        authenticated: false,
        error_code: 'invalid_api_key',
        error_message: `This portal link was revoked at ${T(-5)}, with the API key that made it. Ask for a new link.`,
      });
      expect(limiter.takes.map((t) => t.bucket)).toEqual([keyBucket(hashKey(token)), failureBucket('198.51.100.7')]);
    },
  );

  it('an unknown token of the right shape is 401 with a message about the link, never a key lookup', async () => {
    const { keys, run } = setup();
    const verdict = await run(`pst_${'a'.repeat(40)}`);
    expect(verdict.context).toEqual({
      authenticated: false,
      error_code: 'invalid_api_key',
      error_message: expect.stringMatching(/portal link is not valid/),
    });
    expect(keys.records.size).toBe(0);
  });
});
