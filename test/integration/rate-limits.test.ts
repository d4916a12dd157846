import { MemoryRateLimiter, type RateLimiter } from '../../shared/domain/rate-limits';
import { keys } from '../../shared/store/keys';
import { DynamoRateLimiter } from '../../shared/store/rate-limits';
import { useFreshTable } from '../helpers/table';

const limit = { perSecond: 10, burst: 20 };
const T0 = 1_800_000_000_000;
/** A clock that stands still. */
const at = (ms: number) => () => ms;
/** A clock that reads each of `readings` in turn, then stays on the last. */
const reading =
  (...readings: number[]) =>
  () =>
    readings.length > 1 ? readings.shift()! : readings[0]!;

describe.each([
  ['in memory', () => Promise.resolve({ limiter: new MemoryRateLimiter() as RateLimiter })],
  [
    'in the table (DynamoDB Local)',
    async () => {
      const deps = await useFreshTable();
      return { limiter: new DynamoRateLimiter(deps.db) as RateLimiter };
    },
  ],
])('GCRA rate limiter %s', (_label, make) => {
  let limiter: RateLimiter;
  beforeAll(async () => {
    ({ limiter } = await make());
  });

  it('admits the burst at once, then refuses with Retry-After ≥ 1 whole second', async () => {
    const decisions = [];
    for (let i = 0; i < 25; i++) decisions.push(await limiter.take('b1', limit, at(T0)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    for (const d of decisions.slice(20)) expect(d).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('refills at the sustained rate: one more request every interval', async () => {
    for (let i = 0; i < 20; i++) await limiter.take('b2', limit, at(T0));
    expect((await limiter.take('b2', limit, at(T0 + 50))).allowed).toBe(false);
    expect((await limiter.take('b2', limit, at(T0 + 100))).allowed).toBe(true);
    expect((await limiter.take('b2', limit, at(T0 + 100))).allowed).toBe(false);
    // Idle long enough, the whole burst is available again.
    const later = [];
    for (let i = 0; i < 21; i++) later.push(await limiter.take('b2', limit, at(T0 + 10_000)));
    expect(later.filter((d) => d.allowed)).toHaveLength(20);
  });

  it('never admits more than the burst, however many take at once; other buckets are untouched', async () => {
    const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.take('b3', limit, at(T0))));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect((await limiter.take('b4', limit, at(T0))).allowed).toBe(true);
  });
});

describe('DynamoRateLimiter', () => {
  it('keeps a bucket as one item with a TTL', async () => {
    const deps = await useFreshTable();
    await new DynamoRateLimiter(deps.db).take('b5', limit, at(T0));
    const item = (await deps.db.doc.get({ TableName: deps.db.tableName, Key: keys.rateBucket('b5') })).Item;
    expect(item).toMatchObject({ tat: T0 + 100, expires_at: T0 / 1000 + 120 });
  });

  it('judges a request refused at its arrival once more when its clock has moved on', async () => {
    const limiter = new DynamoRateLimiter((await useFreshTable()).db);
    // A burst whose first request arrived 100 ms after the next one: tat is T0 + 2100.
    for (let i = 0; i < 20; i++) expect((await limiter.take('b6', limit, at(T0 + 100))).allowed).toBe(true);
    // Arrived at T0 (ceiling T0 + 1900), written at T0 + 200 (ceiling T0 + 2100): there is room by then.
    expect(await limiter.take('b6', limit, reading(T0, T0 + 200))).toEqual({ allowed: true });
    // Still over the ceiling at the second reading: refused, with no third judgement.
    expect(await limiter.take('b6', limit, reading(T0, T0 + 250, T0 + 10_000))).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
    });
  });

  it('admits the whole burst when concurrent requests write in another order than they arrived', async () => {
    const limiter = new DynamoRateLimiter((await useFreshTable()).db);
    // 60 arrivals over 300 ms, the latest started first; all judged again, if refused, at T0 + 300.
    const arrivals = Array.from({ length: 60 }, (_, i) => T0 + 5 * (59 - i));
    const decisions = await Promise.all(arrivals.map((t) => limiter.take('b7', limit, reading(t, T0 + 300))));
    // The burst, and at most what 300 ms at 10/s refill besides.
    const allowed = decisions.filter((d) => d.allowed).length;
    expect(allowed).toBeGreaterThanOrEqual(20);
    expect(allowed).toBeLessThanOrEqual(24);
  });
});
