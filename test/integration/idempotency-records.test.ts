import { GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { makeHandler } from '../../functions/api/update-shop';
import { createShop } from '../../shared/domain/shop';
import { recordRef } from '../../shared/store/idempotency';
import type { ApiDeps } from '../../shared/wiring/api';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { useFreshTable } from '../helpers/table';

/**
 * The idempotency records in the table keep Powertools idempotency's item layout
 * (shared/store/idempotency.ts): the records written read as that layout says, and a record
 * put in the table in it (a lock held, a response stored, either expired) is honoured.
 */
describe('idempotency records on the table (DynamoDB Local)', () => {
  let deps: ApiDeps;
  let handler: ReturnType<typeof makeHandler>;
  let me: ReturnType<typeof principal>;
  const nowS = () => Date.now() / 1000;

  beforeAll(async () => {
    deps = await useFreshTable();
    handler = makeHandler(() => ({ shops: deps.shops, now: () => new Date(), idempotency: deps.idempotency }));
    const shop = await createShop(deps, { name: 'Records Shop', owner_email: 'o@records.test' });
    me = principal({ shopId: shop.id });
  });

  const body = (greeting: string) => ({ greeting });
  const ref = (key: string, greeting: string) =>
    recordRef([me.shopId, key], ['PATCH', '/v1/shop', body(greeting)], { owner: me.keyId, shopId: me.shopId });
  const patch = (key: string, greeting: string) =>
    handler(
      apiEvent({
        method: 'PATCH',
        path: '/v1/shop',
        body: JSON.stringify(body(greeting)),
        headers: { 'idempotency-key': key },
        principal: me,
      }),
      context(),
    );
  const put = (item: Record<string, AttributeValue>) =>
    deps.db.client.send(new PutItemCommand({ TableName: deps.db.tableName, Item: item }));
  const read = async (key: string) => {
    const out = await deps.db.client.send(
      new GetItemCommand({
        TableName: deps.db.tableName,
        Key: { pk: { S: key }, sk: { S: 'IDEMPOTENCY' } },
        ConsistentRead: true,
      }),
    );
    return out.Item ? unmarshall(out.Item) : undefined;
  };
  /** A record of this key's request in the table's layout. */
  const stored = (
    key: string,
    greeting: string,
    fields: Record<string, AttributeValue>,
  ): Record<string, AttributeValue> => ({
    pk: { S: ref(key, greeting).key },
    sk: { S: 'IDEMPOTENCY' },
    validation: { S: ref(key, greeting).payloadHash },
    expires_at: { N: String(Math.round(nowS() + 86400)) },
    owner: { S: me.keyId },
    ...fields,
  });

  it('writes the completed record in the same layout: status, expiry, payload hash and the sealed response', async () => {
    const first = await patch('layout-1', 'Layout');
    expect(first.statusCode).toBe(200);
    const item = await read(ref('layout-1', 'Layout').key);
    expect(item).toMatchObject({
      status: 'COMPLETED',
      validation: ref('layout-1', 'Layout').payloadHash,
      data: { sealed: expect.any(String) },
      owner: me.keyId,
    });
    expect(Math.abs((item?.expires_at as number) - (nowS() + 86400))).toBeLessThan(5);
    expect(Number.isInteger(item?.expires_at)).toBe(true);
    // In clear nowhere: the sealed response opens only with the record's key as context.
    expect(JSON.stringify(item)).not.toContain('Layout');
    const opened = JSON.parse(
      await deps.cipher.decrypt((item?.data as { sealed: string }).sealed, ref('layout-1', 'Layout').key, me.shopId),
    ) as { body: string };
    expect(opened.body).toBe(first.body);
  });

  it('replays a completed record in the table', async () => {
    const response = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"from-before"}' };
    const sealed = await deps.cipher.encrypt(JSON.stringify(response), ref('stored-done', 'Before').key, me.shopId);
    await put(stored('stored-done', 'Before', { status: { S: 'COMPLETED' }, data: { M: { sealed: { S: sealed } } } }));
    const replay = await patch('stored-done', 'Before');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe('{"id":"from-before"}');
  });

  it('answers 409 while another request holds the lock, 422 for another body', async () => {
    await put(
      stored('held-lock', 'Locked', {
        status: { S: 'INPROGRESS' },
        in_progress_expiration: { N: String(Date.now() + 60_000) },
      }),
    );
    const inUse = await patch('held-lock', 'Locked');
    expect(inUse.statusCode).toBe(409);
    expect((parseBody(inUse).error as Record<string, unknown>).code).toBe('idempotency_key_in_use');
    const reused = await patch('held-lock', 'Other');
    expect(reused.statusCode).toBe(422);
    expect((parseBody(reused).error as Record<string, unknown>).code).toBe('idempotency_key_reused');
    expect((await read(ref('held-lock', 'Locked').key))?.status).toBe('INPROGRESS');
  });

  it('takes over a lock whose invocation has ended, and a record past its expiry', async () => {
    await put(
      stored('stale-lock', 'Stale', {
        status: { S: 'INPROGRESS' },
        in_progress_expiration: { N: String(Date.now() - 1000) },
      }),
    );
    await put(
      stored('expired', 'Expired', {
        status: { S: 'COMPLETED' },
        expires_at: { N: String(Math.round(nowS() - 10)) },
        data: { M: { sealed: { S: 'not-a-real-seal' } } },
      }),
    );
    for (const [key, greeting] of [
      ['stale-lock', 'Stale'],
      ['expired', 'Expired'],
    ] as const) {
      const result = await patch(key, greeting);
      expect(result.statusCode).toBe(200);
      expect(result.headers['idempotent-replayed']).toBeUndefined();
      expect(parseBody(result).greeting).toBe(greeting);
      expect((await read(ref(key, greeting).key))?.status).toBe('COMPLETED');
    }
  });

  it('a request that outlived its lock neither stores its answer over the next one, nor releases its lock', async () => {
    const r = ref('outlived', 'Outlived');
    const first = await deps.idempotency.lock(r, 1);
    await new Promise((done) => setTimeout(done, 20)); // its invocation's time is up: the lock may be taken over
    const second = await deps.idempotency.lock(r, 60_000);
    expect([first.kind, second.kind]).toEqual(['acquired', 'acquired']);
    const tokenOf = (o: typeof first) => (o.kind === 'acquired' ? o.token : '');
    expect(tokenOf(second)).not.toBe(tokenOf(first));
    // The first request ends late, either way: the second one's lock stays as it was.
    await deps.idempotency.complete(r, tokenOf(first), { statusCode: 200, body: '"first"' });
    await deps.idempotency.release(r, tokenOf(first));
    expect(await read(r.key)).toMatchObject({ status: 'INPROGRESS', lock_token: tokenOf(second) });
    // The second one's answer is the one kept, and replayed.
    await deps.idempotency.complete(r, tokenOf(second), { statusCode: 200, headers: {}, body: '"second"' });
    expect(await deps.idempotency.lock(r, 60_000)).toMatchObject({ kind: 'completed', response: { body: '"second"' } });
  });

  it("holds the lock for the invocation's remaining time while the request runs", async () => {
    let seen: Record<string, unknown> | undefined;
    const slow = makeHandler(() => ({
      shops: {
        ...deps.shops,
        get: (id: string) => deps.shops.get(id),
        create: (s: never) => deps.shops.create(s),
        update: async (...args: Parameters<typeof deps.shops.update>) => (
          (seen = await read(ref('lock-1', 'Lock').key)),
          deps.shops.update(...args)
        ),
      },
      now: () => new Date(),
      idempotency: deps.idempotency,
    }));
    const started = Date.now();
    const result = await slow(
      apiEvent({
        method: 'PATCH',
        path: '/v1/shop',
        body: JSON.stringify(body('Lock')),
        headers: { 'idempotency-key': 'lock-1' },
        principal: me,
      }),
      context(),
    );
    expect(result.statusCode).toBe(200);
    expect(seen).toMatchObject({ status: 'INPROGRESS', validation: ref('lock-1', 'Lock').payloadHash });
    expect(seen?.data).toBeUndefined();
    expect(seen?.in_progress_expiration as number).toBeGreaterThan(started);
  });
});
