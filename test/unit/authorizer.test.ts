import { makeHandler } from '../../functions/authorizer';
import { generateSecretKey, hashKey, type ApiKeyRecord, type ApiKeyStore } from '../../shared/domain/api-keys';
import { failureBucket, keyBucket, limitOf, MemoryRateLimiter, type RateLimit, type RateLimits } from '../../shared/domain/rate-limits';

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
  const authorize = makeHandler(
    () => ({ apiKeys: keys, rateLimiter: limiter, rateLimits: LIMITS }),
    () => T0,
  );
  /** One request: started, its lookup let answer once it waits, its verdict returned. */
  const run = async (key: string, sourceIp = '198.51.100.7') => {
    limiter.answeredBefore = keys.answered;
    const verdict = authorize({ headers: { authorization: `Bearer ${key}` }, requestContext: { http: { sourceIp } } });
    await flush();
    keys.answer();
    return verdict;
  };
  return { keys, limiter, run };
}

async function issued(keys: HeldKeys, mode: 'test' | 'live', revoked = false) {
  const key = generateSecretKey(mode);
  await keys.put({ id: 'key_01jd0000000000000000000000', shop_id: 'shop_01jd0000000000000000000000', key_hash: hashKey(key), mode, scopes: ['settings:read'], write: false, revoked, created_at: '2026-11-21T00:00:00.000Z', revoked_at: null });
  return key;
}

describe('authorizer: the key lookup and the rate-limit take', () => {
  it('a key seen to authenticate takes from its bucket (named by its hash, at its mode’s limit) while it is looked up; the first time, after', async () => {
    const { keys, limiter, run } = setup();
    const key = await issued(keys, 'live');
    const bucket = { bucket: keyBucket(hashKey(key)), limit: LIMITS.live };
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true, mode: 'live' }) });
    expect(limiter.takes).toEqual([{ ...bucket, lookupPending: false }]);
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true, mode: 'live' }) });
    expect(limiter.takes).toEqual([
      { ...bucket, lookupPending: false },
      { ...bucket, lookupPending: true },
    ]);
  });

  it('over the key’s limit: authorized with rate_limited in the context, so the route answers 429', async () => {
    const { keys, run } = setup();
    const key = await issued(keys, 'test');
    const verdicts = [];
    for (let i = 0; i < LIMITS.test.burst + 1; i++) verdicts.push(await run(key));
    expect(verdicts.slice(0, -1).every((v) => v.isAuthorized && v.context.rate_limited === undefined)).toBe(true);
    expect(verdicts.at(-1)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true, rate_limited: true, retry_after: '1' }) });
  });

  it('an unknown, malformed or missing key takes from its source address’s bucket alone, never a key bucket; past that budget the request is refused outright', async () => {
    const { limiter, run } = setup();
    const verdicts = [];
    for (let i = 0; i < LIMITS.authFailures.burst; i++) verdicts.push(await run(generateSecretKey('test')));
    expect(verdicts.every((v) => v.isAuthorized && v.context.error_code === 'invalid_api_key')).toBe(true);
    expect(await run('sk_test_short')).toEqual({ isAuthorized: false, context: {} });
    expect(await run('')).toEqual({ isAuthorized: false, context: {} });
    // Within its budget, another address hears why: the contract's 401 codes.
    expect((await run('', '192.0.2.1')).context).toMatchObject({ error_code: 'missing_api_key' });
    expect((await run('sk_test_short', '192.0.2.1')).context).toMatchObject({ error_code: 'invalid_api_key' });
    expect(new Set(limiter.takes.map((t) => t.bucket))).toEqual(new Set([failureBucket('198.51.100.7'), failureBucket('192.0.2.1')]));
    // Another address has a budget of its own.
    expect((await run(generateSecretKey('test'), '203.0.113.9')).isAuthorized).toBe(true);
  });

  it('a key revoked after it was seen: its early take is wasted on its own bucket, it answers 401, and it is looked up first from then on', async () => {
    const { keys, limiter, run } = setup();
    const key = await issued(keys, 'test');
    await run(key);
    keys.records.set(hashKey(key), { ...(keys.records.get(hashKey(key)) as ApiKeyRecord), revoked: true });
    limiter.takes.length = 0;
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: false, error_code: 'invalid_api_key', error_message: expect.stringMatching(/revoked/) }) });
    expect(limiter.takes.map((t) => [t.bucket, t.lookupPending])).toEqual([
      [keyBucket(hashKey(key)), true],
      [failureBucket('198.51.100.7'), false],
    ]);
    limiter.takes.length = 0;
    await run(key);
    expect(limiter.takes.map((t) => t.bucket)).toEqual([failureBucket('198.51.100.7')]);
  });

  it('the bucket store failing lets the request through; the key store failing is the route’s 500', async () => {
    const { keys, limiter, run } = setup();
    const key = await issued(keys, 'test');
    limiter.failing = true;
    // On the first request (the take after the lookup) and once the key is known (the take beside it).
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true }) });
    expect(await run(key)).toEqual({ isAuthorized: true, context: expect.objectContaining({ authenticated: true }) });
    expect(limiter.takes.map((t) => t.lookupPending)).toEqual([false, true]);
    keys.failing = true;
    expect(await run(key)).toEqual({ isAuthorized: true, context: { authenticated: false, error_code: 'internal_error' } });
  });
});
