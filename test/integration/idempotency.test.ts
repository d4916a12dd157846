import { makeHandler } from '../../functions/api/update-shop';
import { createShop, type ShopStore } from '../../shared/domain/shop';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { useFreshTable } from '../helpers/table';

/** Wraps the real store to count writes, and optionally to slow or fail them. */
class InstrumentedShops implements ShopStore {
  writes = 0;
  delayMs = 0;
  failNext = false;
  constructor(private readonly inner: ShopStore) {}
  get(id: string) {
    return this.inner.get(id);
  }
  create(shop: Parameters<ShopStore['create']>[0]) {
    return this.inner.create(shop);
  }
  async update(...args: Parameters<ShopStore['update']>) {
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('simulated store failure');
    }
    this.writes++;
    return this.inner.update(...args);
  }
}

describe('Idempotency-Key on PATCH /v1/shop (DynamoDB Local)', () => {
  let deps: Deps;
  let shops: InstrumentedShops;
  let handler: ReturnType<typeof makeHandler>;
  let me: ReturnType<typeof principal>;

  beforeAll(async () => {
    deps = await useFreshTable();
    shops = new InstrumentedShops(deps.shops);
    handler = makeHandler(() => ({ shops, now: () => new Date(), idempotency: deps.idempotency }));
    const shop = await createShop(deps, { name: 'Idem Shop', owner_email: 'o@idem.test' });
    me = principal({ shopId: shop.id });
  });

  beforeEach(() => {
    shops.writes = 0;
    shops.delayMs = 0;
  });

  const patch = (key: string, body: object, opts: { who?: typeof me; path?: string; method?: string } = {}) =>
    handler(
      apiEvent({
        method: opts.method ?? 'PATCH',
        path: opts.path ?? '/v1/shop',
        body: JSON.stringify(body),
        headers: { 'idempotency-key': key },
        principal: opts.who ?? me,
      }),
      context(),
    );

  it('10 concurrent requests with one key: one write, the others replay or get 409', async () => {
    shops.delayMs = 150;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => patch('concurrent-1', { greeting: 'Concurrent hello' })),
    );
    expect(shops.writes).toBe(1);
    const firsts = results.filter((r) => r.statusCode === 200 && !r.headers['idempotent-replayed']);
    const replays = results.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === 'true');
    const inUse = results.filter((r) => r.statusCode === 409);
    expect(firsts).toHaveLength(1);
    expect(replays.length + inUse.length).toBe(9);
    for (const r of inUse) expect((parseBody(r).error as Record<string, unknown>).code).toBe('idempotency_key_in_use');
    for (const r of replays) expect(r.body).toBe(firsts[0]?.body);

    // A later replay is byte-identical and writes nothing.
    const later = await patch('concurrent-1', { greeting: 'Concurrent hello' });
    expect(later.statusCode).toBe(200);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body).toBe(firsts[0]?.body);
    expect(later.headers['request-id']).not.toBe(firsts[0]?.headers['request-id']);
    expect(shops.writes).toBe(1);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const first = await patch('order-1', { greeting: 'A', trade: 'hvac' });
    const again = await patch('order-1', { trade: 'hvac', greeting: 'A' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('the same key with another body, path or method → 422, and the first response is kept', async () => {
    const first = await patch('reuse-1', { greeting: 'First' });
    expect(first.statusCode).toBe(200);
    for (const reuse of [
      patch('reuse-1', { greeting: 'Second' }),
      patch(
        'reuse-1',
        { greeting: 'First' },
        { method: 'POST', path: '/v1/jobs/job_01jd0000000000000000000000/approve' },
      ),
    ]) {
      const r = await reuse;
      expect(r.statusCode).toBe(422);
      expect((parseBody(r).error as Record<string, unknown>).code).toBe('idempotency_key_reused');
    }
    const replay = await patch('reuse-1', { greeting: 'First' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(shops.writes).toBe(1);
  });

  it("a 409 or 422 of a second request never erases the first request's record", async () => {
    shops.delayMs = 300;
    const first = patch('guard-1', { greeting: 'Guarded' });
    await new Promise((r) => setTimeout(r, 50));
    const conflicting = await patch('guard-1', { greeting: 'Guarded' });
    const reused = await patch('guard-1', { greeting: 'Other' });
    expect([conflicting.statusCode, reused.statusCode]).toEqual([409, 422]);
    expect((await first).statusCode).toBe(200);
    shops.delayMs = 0;
    const third = await patch('guard-1', { greeting: 'Guarded' });
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(shops.writes).toBe(1);
  });

  it('a failed first request leaves no record, so the client may retry with the same key', async () => {
    const invalid = await patch('retry-1', { greeting: '' });
    expect(invalid.statusCode).toBe(400);
    shops.failNext = true;
    const crashed = await patch('retry-1', { greeting: 'Retry works' });
    expect(crashed.statusCode).toBe(500);
    const retried = await patch('retry-1', { greeting: 'Retry works' });
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(parseBody(retried).greeting).toBe('Retry works');
  });

  it('keys are scoped to the shop', async () => {
    const other = await createShop(deps, { name: 'Other Shop', owner_email: 'o@other.test' });
    const a = await patch('shared-key', { greeting: 'Shop A' });
    const b = await patch('shared-key', { greeting: 'Shop B' }, { who: principal({ shopId: other.id }) });
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(parseBody(b)).toMatchObject({ id: other.id, greeting: 'Shop B' });
  });

  it('a record answers only the API key that made it: another key of the shop gets 422, before or after completion', async () => {
    const colleague = principal({ shopId: me.shopId, keyId: 'key_01jd0000000000000000000001' });
    shops.delayMs = 200;
    const first = patch('mine-1', { greeting: 'Mine' });
    await new Promise((r) => setTimeout(r, 50));
    const whileRunning = await patch('mine-1', { greeting: 'Mine' }, { who: colleague });
    expect((await first).statusCode).toBe(200);
    shops.delayMs = 0;
    const afterwards = await patch('mine-1', { greeting: 'Mine' }, { who: colleague });
    for (const r of [whileRunning, afterwards]) {
      expect(r.statusCode).toBe(422);
      expect(parseBody(r).error).toMatchObject({
        code: 'idempotency_key_reused',
        message: expect.stringContaining('another API key'),
      });
      expect(r.body).not.toContain('Mine');
    }
    const replay = await patch('mine-1', { greeting: 'Mine' });
    expect([replay.statusCode, replay.headers['idempotent-replayed'], replay.body]).toEqual([
      200,
      'true',
      (await first).body,
    ]);
    expect(shops.writes).toBe(1);
  });

  it('without the header every request executes', async () => {
    const event = () => apiEvent({ method: 'PATCH', path: '/v1/shop', body: '{"greeting":"No key"}', principal: me });
    await handler(event(), context());
    await handler(event(), context());
    expect(shops.writes).toBe(2);
  });
});
