import { makeHandler } from '../../functions/authorizer';
import { generateSecretKey, hashKey, type ApiKeyRecord, type ApiKeyStore } from '../../shared/domain/api-keys';
import { failureBucket, keyBucket, limitOf, MemoryRateLimiter, type RateLimit, type RateLimits } from '../../shared/domain/rate-limits';

const LIMITS: RateLimits = { test: limitOf(25, 2), live: limitOf(100, 2), authFailures: limitOf(10, 2) };

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

/** The in-memory limiter, recording each take and whether the request's key lookup had answered by then. */
class RecordingLimiter extends MemoryRateLimiter {
  readonly takes: { bucket: string; limit: RateLimit; lookupPending: boolean }[] = [];
  /** `keys.answered` when the current request started. */
  answeredBefore = 0;
  failing = false;
  constructor(private readonly keys: HeldKeys) {
    super();
  }
  override async take(bucket: string, limit: RateLimit, nowMs: number) {
    this.takes.push({ bucket, limit, lookupPending: this.keys.answered === this.answeredBefore });
    if (this.failing) throw new Error('bucket store down');
    return super.take(bucket, limit, nowMs);
  }
}

const flush = () => new Promise((r) => setImmediate(r));

function setup() {
  const keys = new HeldKeys();
  const limiter = new RecordingLimiter(keys);
  const authorize = makeHandler(() => ({ apiKeys: keys, rateLimiter: limiter, rateLimits: LIMITS }));
  const request = (key: string, sourceIp = '198.51.100.7') => {
    limiter.answeredBefore = keys.answered;
    return authorize({ headers: { authorization: `Bearer ${key}` }, requestContext: { http: { sourceIp } } });
  };
  /** Starts a request, lets its lookup answer once it waits, and returns the verdict. */
  const run = async (key: string, sourceIp?: string) => {
    const verdict = request(key, sourceIp);
    await flush();
    keys.answer();
    return verdict;
  };
  return { keys, limiter, request, run };
}

async function issued(keys: HeldKeys, mode: 'test' | 'live', revoked = false) {
  const key = generateSecretKey(mode);
  await keys.put({ id: 'key_01jd0000000000000000000000', shop_id: 'shop_01jd0000000000000000000000', key_hash: hashKey(key), mode, scopes: ['settings:read'], write: false, revoked, created_at: '2026-11-21T00:00:00.000Z', revoked_at: null });
  return key;
}

describe('authorizer: the key lookup and the rate-limit take', () => {
  it('takes from the key’s bucket (named by its hash, at its mode’s limit) while the lookup is still waiting', async () => {
    const { keys, limiter, request } = setup();
    const key = await issued(keys, 'live');
    const verdict = request(key);
    await flush();
    expect(keys.waiting).toHaveLength(1);
    expect(limiter.takes).toEqual([{ bucket: keyBucket(hashKey(key)), limit: LIMITS.live, lookupPending: true }]);
    keys.answer();
    expect(await verdict).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true, mode: 'live' }) });
    expect(limiter.takes).toHaveLength(1);
  });

  it('over the key’s limit: authorized with rate_limited in the context, so the route answers 429', async () => {
    const { keys, run } = setup();
    const key = await issued(keys, 'test');
    const verdicts = [];
    for (let i = 0; i < LIMITS.test.burst + 1; i++) verdicts.push(await run(key));
    expect(verdicts.slice(0, -1).every((v) => v.isAuthorized && v.context.rate_limited === undefined)).toBe(true);
    expect(verdicts.at(-1)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true, rate_limited: true, retry_after: '1' }) });
  });

  it('an unknown or revoked key takes from its source address’s bucket too; past that budget the request is refused outright', async () => {
    const { keys, limiter, run } = setup();
    const revoked = await issued(keys, 'test', true);
    expect(await run(revoked)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: false, error_code: 'invalid_api_key' }) });
    expect(limiter.takes.map((t) => t.bucket)).toEqual([keyBucket(hashKey(revoked)), failureBucket('198.51.100.7')]);
    const verdicts = [];
    for (let i = 0; i < LIMITS.authFailures.burst; i++) verdicts.push(await run(generateSecretKey('test')));
    expect(verdicts.slice(0, -1).every((v) => v.isAuthorized)).toBe(true);
    expect(verdicts.at(-1)).toEqual({ isAuthorized: false, context: {} });
  });

  it('once its source address has failed lately, a key is looked up first: made-up keys cost no write of their own', async () => {
    const { keys, limiter, run } = setup();
    await run(generateSecretKey('test'));
    limiter.takes.length = 0;
    const unknown = generateSecretKey('test');
    await run(unknown);
    expect(limiter.takes.map((t) => t.bucket)).toEqual([failureBucket('198.51.100.7')]);
    // A valid key from that address still takes from its own bucket, after its lookup.
    limiter.takes.length = 0;
    const valid = await issued(keys, 'test');
    expect((await run(valid)).context).toMatchObject({ authenticated: true });
    expect(limiter.takes).toEqual([{ bucket: keyBucket(hashKey(valid)), limit: LIMITS.test, lookupPending: false }]);
    // Another address is not affected.
    limiter.takes.length = 0;
    await run(valid, '203.0.113.9');
    expect(limiter.takes).toEqual([{ bucket: keyBucket(hashKey(valid)), limit: LIMITS.test, lookupPending: true }]);
  });

  it('a malformed or missing key never names a key bucket', async () => {
    const { limiter, request } = setup();
    expect((await request('sk_test_short')).context).toMatchObject({ error_code: 'invalid_api_key' });
    expect((await request('')).context).toMatchObject({ error_code: 'missing_api_key' });
    expect(limiter.takes.map((t) => t.bucket)).toEqual([failureBucket('198.51.100.7'), failureBucket('198.51.100.7')]);
  });

  it('the bucket store failing lets the request through; the key store failing is the route’s 500', async () => {
    const { keys, limiter, run } = setup();
    const key = await issued(keys, 'test');
    limiter.failing = true;
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true }) });
    keys.failing = true;
    expect(await run(key)).toEqual({ isAuthorized: true, context: { authenticated: false, error_code: 'internal_error' } });
  });
});
