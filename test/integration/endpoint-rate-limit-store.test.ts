import { randomUUID } from 'node:crypto';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint, toEndpointResource, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { admit } from '../../shared/delivery/circuit';
import { rateAllowance } from '../../shared/delivery/rate-window';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

describe("an endpoint's rate limit in the table (DynamoDB Local)", () => {
  let deps: ApiDeps;
  let endpoints: DynamoEndpointStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    endpoints = new DynamoEndpointStore(deps.db);
  });

  async function newEndpoint(rate_limit?: number | null): Promise<EndpointRecord> {
    const shop = await createShop(deps, { name: 'Rate Store Shop', owner_email: 'o@rate-store.test' });
    const created = await createEndpoint(
      { ...deps, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) },
      shop.id,
      { url: 'https://hooks.example.com/x', events: ['call.completed'], rate_limit },
    );
    return (await endpoints.get(shop.id, created.id)) as EndpointRecord;
  }
  const ids = (n: number) => Array.from({ length: n }, () => `dlv_${randomUUID()}`);

  it('is stored on create and PATCH, and null clears it', async () => {
    const e = await newEndpoint(2);
    expect(toEndpointResource(e).rate_limit).toBe(2);
    expect((await endpoints.update(e.shop_id, e.id, { rate_limit: 1000 }, e.updated_at))?.rate_limit).toBe(1000);
    expect((await endpoints.update(e.shop_id, e.id, { description: 'CRM' }, e.updated_at))?.rate_limit).toBe(1000);
    expect((await endpoints.update(e.shop_id, e.id, { rate_limit: null }, e.updated_at))?.rate_limit).toBeNull();
    expect(toEndpointResource((await endpoints.get(e.shop_id, e.id)) as EndpointRecord).rate_limit).toBeNull();
  });

  it('the admission writes the starts it counted, on the version: a consumer that read before it loses, and on its re-read finds no room', async () => {
    const read = await newEndpoint(2);
    const now = Date.now();
    const first = admit(read, ids(3), { now, leaseMs: 60_000, token: randomUUID });
    // Both consumers read the endpoint before either wrote; the in-flight bound alone would let both in.
    const second = admit(read, ids(2), { now, leaseMs: 60_000, token: randomUUID });
    expect([first.send.length, second.send.length]).toEqual([2, 2]);
    expect(await endpoints.admit(read, first)).toBe(true);
    expect(await endpoints.admit(read, second)).toBe(false);

    const reread = (await endpoints.get(read.shop_id, read.id)) as EndpointRecord;
    expect(reread.rate_starts).toEqual(first.rateStarts);
    expect(rateAllowance(2, reread.rate_starts ?? {}, now)).toBe(0);
    expect(Object.keys(reread.leases)).toHaveLength(2);
    const again = admit(reread, ids(2), { now: Date.now(), leaseMs: 60_000, token: randomUUID });
    expect(again.send).toEqual([]);
    expect(again.rateLimited).toHaveLength(2);
    // Nothing to start, nothing to write: the item is as the first admission left it.
    expect((await endpoints.get(read.shop_id, read.id))?.lease_version).toBe(reread.lease_version);
  });

  it('a raise ends the line of the old rate, also against an admission counted on the endpoint as read before it', async () => {
    const e = await newEndpoint(1);
    const now = Date.now();
    // One starts, four wait in line: the line's end is written.
    expect(await endpoints.admit(e, admit(e, ids(5), { now, leaseMs: 60_000, token: randomUUID }))).toBe(true);
    const read = (await endpoints.get(e.shop_id, e.id)) as EndpointRecord;
    expect(read.rate_tail).toBeGreaterThan(now + 3_000);
    // A consumer counts more deliveries into that line, then the raise commits before its write.
    const stale = admit(read, ids(3), { now: Date.now(), leaseMs: 60_000, token: randomUUID });
    expect(stale.rateTail).toBeGreaterThan(read.rate_tail as number);
    const raised = await endpoints.update(e.shop_id, e.id, { rate_limit: 1000, rate_raised: true }, e.updated_at);
    expect(raised?.rate_tail ?? null).toBeNull();
    // Written, it would put the old line's end back, and new deliveries would queue behind it at the new rate.
    expect(await endpoints.admit(read, stale)).toBe(false);
    const reread = (await endpoints.get(e.shop_id, e.id)) as EndpointRecord;
    expect([reread.rate_limit, reread.rate_tail ?? null]).toEqual([1000, null]);
    expect(admit(reread, ids(3), { now: Date.now(), leaseMs: 60_000, token: randomUUID }).send).toHaveLength(3);
  });

  it('under a rate limit, batches that read the endpoint at once never start more than the rate between them (no admission on the count alone)', async () => {
    const read = await newEndpoint(3);
    const now = Date.now();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => admit(read, ids(1), { now, leaseMs: 60_000, token: randomUUID })).map((a) =>
        endpoints.admit(read, a),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const after = (await endpoints.get(read.shop_id, read.id)) as EndpointRecord;
    expect(Object.values(after.rate_starts ?? {}).reduce((n, c) => n + c, 0)).toBe(1);
  });
});
