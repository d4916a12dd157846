/**
 * A flaky network between the API and the table (test/helpers/fault-proxy.ts): answers
 * dropped after the change committed, connections reset, requests delayed. The SDK retries;
 * a retried write must recognise its own earlier attempt, so every answer a client ends up
 * with (after at most one retry with the same Idempotency-Key) says what the table holds.
 */
import { makeHandler as makeApprove } from '../../functions/api/approve-job';
import { makeHandler as makeCreate } from '../../functions/api/create-webhook-endpoint';
import { makeHandler as makeDecline } from '../../functions/api/decline-job';
import { makeHandler as makeRotate } from '../../functions/api/rotate-webhook-endpoint-secret';
import { makeHandler as makeDelete } from '../../functions/api/delete-webhook-endpoint';
import { simulatedCall } from '../../lib/cli/simulate';
import { ensureTable } from '../../lib/local/dynamodb-local';
import { configFromEnv } from '../../shared/config';
import { ingestCall } from '../../shared/domain/calls';
import { createShop, type Shop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { seeded, startFaultProxy, type FaultProxy } from '../helpers/fault-proxy';
import { testEndpoint, uniqueTableName } from '../helpers/table';

const APPROVALS = 100;
const DELETES = 20;
/** Of the requests to the table: this share answered and then dropped, plus a few resets and delays. */
const DROPPED = 0.2;
/** Lambda containers the approvals are spread over: each has its own SDK clients (and retry quota) and runs one request at a time. */
const CONTAINERS = 10;

type Ref = { shopId: string; id: string };
type Answer = { statusCode: number; body?: string; headers?: Record<string, string> };

describe('store faults: dropped answers, resets and delays between the API and the table', () => {
  let proxy: FaultProxy;
  let deps: ApiDeps;
  let tableName: string;
  const shops: Shop[] = [];
  const jobs: Ref[] = [];
  const endpoints: Ref[] = [];
  /** A container's wiring: its own SDK clients on the same table, through the proxy. */
  const container = () =>
    apiDeps(configFromEnv({ ...process.env, DYNAMODB_ENDPOINT: proxy.endpoint, TABLE_NAME: tableName }));

  beforeAll(async () => {
    proxy = await startFaultProxy(testEndpoint());
    tableName = uniqueTableName();
    await ensureTable(testEndpoint(), tableName);
    deps = container();
    const accept = { ...deps, checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }) };
    for (let s = 0; s < 2; s++) {
      const shop = await createShop(deps, { name: `Faulty Shop ${s}`, owner_email: `o${s}@faults.test` });
      shops.push(shop);
      for (let i = 0; i < DELETES / 2; i++)
        endpoints.push({
          shopId: shop.id,
          id: (await createEndpoint(accept, shop.id, { url: `https://hooks.example.com/${s}/${i}`, events: ['*'] })).id,
        });
    }
    while (jobs.length < APPROVALS + 5) {
      const shop = shops[jobs.length % 2] as Shop;
      const ingest = await ingestCall(
        deps,
        simulatedCall(shop, { withJob: true, emergency: false, endedAt: new Date() }),
      );
      for (const id of ingest.job_ids) jobs.push({ shopId: shop.id, id });
    }
  }, 120_000);
  afterAll(async () => {
    deps.db.client.destroy();
    await proxy.stop();
  });

  /** A flaky network: never more than three faults in a row for one request (the SDK makes up to four attempts), so not an outage. */
  function flaky(seed: number) {
    const random = seeded(seed);
    proxy.maxFaultsPerRequest = 3;
    proxy.decide = () => {
      const r = random();
      if (r < DROPPED) return 'drop-after-commit';
      if (r < DROPPED + 0.03) return 'reset-before';
      if (r < DROPPED + 0.06) return 'delay';
      return 'none';
    };
  }
  function calm() {
    proxy.decide = () => 'none';
    proxy.maxFaultsPerRequest = Number.POSITIVE_INFINITY;
  }
  const approveRequest = (job: Ref, key: string) =>
    apiEvent({
      method: 'POST',
      path: `/v1/jobs/${job.id}/approve`,
      pathParameters: { id: job.id },
      body: JSON.stringify({ version: 1 }),
      headers: { 'idempotency-key': key },
      principal: principal({ shopId: job.shopId }),
    });

  /** A request, and once more (the same Idempotency-Key) if its first answer was a 5xx or a 409 for a key in use. */
  async function withOneRetry(send: () => Promise<Answer>): Promise<Answer> {
    const first = await send();
    const code = (parseBody(first).error as { code?: string } | undefined)?.code;
    return first.statusCode >= 500 || code === 'idempotency_key_in_use' ? send() : first;
  }

  it(`${APPROVALS} approvals: each answer (after at most one retry) matches the job in the table, and each approval emitted one event`, async () => {
    flaky(Number(process.env.FAULT_SEED ?? 20261125));
    const mine = jobs.slice(0, APPROVALS);
    const answers = (
      await Promise.all(
        Array.from({ length: CONTAINERS }, async (_, c) => {
          const approve = makeApprove(container);
          const done: { job: Ref; answer: Answer }[] = [];
          for (const job of mine.filter((_, i) => i % CONTAINERS === c))
            done.push({
              job,
              answer: await withOneRetry(() => approve(approveRequest(job, `approve-${job.id}`), context())),
            });
          return done;
        }),
      )
    ).flat();
    calm();
    const misreported: string[] = [];
    for (const { job, answer } of answers) {
      const stored = await deps.jobs.get(job.shopId, job.id);
      const approved = stored?.status === 'approved';
      const said = answer.statusCode === 200 && parseBody(answer).status === 'approved';
      if (approved !== said)
        misreported.push(`${job.id}: table ${stored?.status}, answer ${answer.statusCode} ${answer.body ?? ''}`);
    }
    expect(misreported).toEqual([]);
    // One job.approved event per approved job, never two.
    for (const shop of shops) {
      const ids = (await deps.events.list(shop.id, { limit: 100 }, 'job.approved')).items.map(
        (e) => (e.data as { id: string }).id,
      );
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(mine.filter((j) => j.shopId === shop.id).length);
    }
    expect(proxy.counts['drop-after-commit']).toBeGreaterThan(50);
  }, 120_000);

  it('an approval whose every answer from the table is lost (the SDK gives up: 500) is, on the retry with its key, the approval it made', async () => {
    const job = jobs[APPROVALS] as Ref;
    const approve = makeApprove(container);
    // The decision's transaction commits on its first attempt; that answer and every retry's are lost.
    proxy.decide = (operation) => (operation === 'TransactWriteItems' ? 'drop-after-commit' : 'none');
    const first = await approve(approveRequest(job, 'lost-answer'), context());
    calm();
    expect(first.statusCode).toBe(500);
    expect((await deps.jobs.get(job.shopId, job.id))?.status).toBe('approved');
    const again = await approve(approveRequest(job, 'lost-answer'), context());
    expect(again.statusCode).toBe(200);
    expect(parseBody(again)).toMatchObject({ id: job.id, status: 'approved', version: 2 });
    // Another request (another key) is still told the job has moved on.
    const other = await approve(approveRequest(job, 'someone-else'), context());
    expect(other.statusCode).toBe(409);
    expect(parseBody(other).error).toMatchObject({ code: 'version_conflict' });
  });

  it("the Idempotency-Key's lock whose answer was lost is still this request's: no 409 on the key's first use, and the key is not left locked", async () => {
    const job = jobs[APPROVALS + 1] as Ref;
    const approve = makeApprove(container);
    let puts = 0;
    proxy.decide = (operation) => (operation === 'PutItem' && puts++ === 0 ? 'drop-after-commit' : 'none');
    const answer = await approve(approveRequest(job, 'lost-lock'), context());
    calm();
    expect(puts).toBeGreaterThanOrEqual(2);
    expect(answer.statusCode).toBe(200);
    const replay = await approve(approveRequest(job, 'lost-lock'), context());
    expect(replay.statusCode).toBe(200);
    expect(replay.headers?.['idempotent-replayed']).toBe('true');
  });

  it('an approval whose stored response could not be written (500) answers the approval on the retry with its key', async () => {
    const job = jobs[APPROVALS + 2] as Ref;
    const approve = makeApprove(container);
    // The idempotency record's completion (an UpdateItem) never gets through.
    proxy.decide = (operation) => (operation === 'UpdateItem' ? 'reset-before' : 'none');
    const first = await approve(approveRequest(job, 'lost-completion'), context());
    calm();
    expect(first.statusCode).toBe(500);
    const again = await approve(approveRequest(job, 'lost-completion'), context());
    expect(again.statusCode).toBe(200);
    expect(parseBody(again)).toMatchObject({ status: 'approved', version: 2 });
  });

  it('a created endpoint whose answer was lost (500) is, on the retry with its key, the same endpoint and secret: not a second endpoint', async () => {
    const shop = await createShop(deps, { name: 'Create Retry Shop', owner_email: 'o@create.test' });
    const create = makeCreate(() => ({
      ...container(),
      checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }),
    }));
    const request = () =>
      apiEvent({
        method: 'POST',
        path: '/v1/webhook-endpoints',
        body: JSON.stringify({ url: 'https://hooks.example.com/once', events: ['*'] }),
        headers: { 'idempotency-key': 'create-once' },
        principal: principal({ shopId: shop.id }),
      });
    // The endpoint is made; the idempotency record's completion never gets through.
    proxy.decide = (operation) => (operation === 'UpdateItem' ? 'reset-before' : 'none');
    const first = await create(request(), context());
    calm();
    expect(first.statusCode).toBe(500);
    const again = await create(request(), context());
    expect(again.statusCode).toBe(201);
    const made = await deps.endpoints.list(shop.id);
    expect(made.map((e) => e.id)).toEqual([parseBody(again).id]);
    // The secret shown is the endpoint's own: deliveries are signed with it.
    const [ciphertext] = made[0]?.secrets.map((s) => s.ciphertext) ?? [];
    expect(await deps.cipher.decrypt(ciphertext as string, `webhook_endpoint:${shop.id}:${made[0]?.id}`, shop.id)).toBe(
      parseBody(again).secret,
    );
  });

  it('a lock whose put landed but whose every answer was lost is taken back: the retry with the key is not refused as "in use"', async () => {
    const job = jobs[APPROVALS + 3] as Ref;
    const approve = makeApprove(container);
    proxy.decide = (operation) => (operation === 'PutItem' ? 'drop-after-commit' : 'none');
    const first = await approve(approveRequest(job, 'lock-lost'), context());
    calm();
    expect(first.statusCode).toBe(500);
    const again = await approve(approveRequest(job, 'lock-lost'), context());
    expect(again.statusCode).toBe(200);
    expect(parseBody(again)).toMatchObject({ status: 'approved' });
  });

  it('a decline retried after a 500 with another reason is another request: told the job has moved on, not given the first answer', async () => {
    const job = jobs[APPROVALS + 4] as Ref;
    const decline = makeDecline(container);
    const request = (reason: string) =>
      apiEvent({
        method: 'POST',
        path: `/v1/jobs/${job.id}/decline`,
        pathParameters: { id: job.id },
        body: JSON.stringify({ version: 1, reason }),
        headers: { 'idempotency-key': 'decline-once' },
        principal: principal({ shopId: job.shopId }),
      });
    proxy.decide = (operation) => (operation === 'UpdateItem' ? 'reset-before' : 'none');
    expect((await decline(request('Outside our area'), context())).statusCode).toBe(500);
    calm();
    const other = await decline(request('Fully booked'), context());
    expect(other.statusCode).toBe(409);
    const same = await decline(request('Outside our area'), context());
    expect(same.statusCode).toBe(200);
    expect(parseBody(same)).toMatchObject({ status: 'declined', decline_reason: 'Outside our area' });
  });

  it('a rotation whose answer was lost is not made twice: the secret receivers verify with keeps its grace', async () => {
    const endpoint = endpoints[0] as Ref;
    const before = await deps.endpoints.get(endpoint.shopId, endpoint.id);
    const rotate = makeRotate(container);
    let updates = 0;
    proxy.decide = (operation) => (operation === 'UpdateItem' && updates++ === 0 ? 'drop-after-commit' : 'none');
    const answer = await rotate(
      apiEvent({
        method: 'POST',
        path: `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
        pathParameters: { id: endpoint.id },
        principal: principal({ shopId: endpoint.shopId }),
      }),
      context(),
    );
    calm();
    expect(answer.statusCode).toBe(200);
    const after = await deps.endpoints.get(endpoint.shopId, endpoint.id);
    expect(after?.secrets).toHaveLength(2);
    expect(after?.secrets[1]?.ciphertext).toBe(before?.secrets[0]?.ciphertext);
    expect(after?.secrets_version).toBe((before?.secrets_version ?? 0) + 1);
    const context_ = `webhook_endpoint:${endpoint.shopId}:${endpoint.id}`;
    expect(await deps.cipher.decrypt(after?.secrets[0]?.ciphertext as string, context_, endpoint.shopId)).toBe(
      parseBody(answer).secret,
    );
  });

  it(`${DELETES} endpoint deletes: each answer (after at most one retry) says whether the endpoint is gone`, async () => {
    const remove = makeDelete(container);
    flaky(7);
    const misreported: string[] = [];
    for (const endpoint of endpoints) {
      const send = () =>
        remove(
          apiEvent({
            method: 'DELETE',
            path: `/v1/webhook-endpoints/${endpoint.id}`,
            pathParameters: { id: endpoint.id },
            principal: principal({ shopId: endpoint.shopId }),
          }),
          context(),
        );
      const answer = await withOneRetry(send);
      const decide = proxy.decide;
      proxy.decide = () => 'none';
      const gone = (await deps.endpoints.get(endpoint.shopId, endpoint.id)) === null;
      proxy.decide = decide;
      if (gone !== (answer.statusCode === 200))
        misreported.push(`${endpoint.id}: gone ${gone}, answer ${answer.statusCode} ${answer.body ?? ''}`);
    }
    calm();
    expect(misreported).toEqual([]);
    expect(proxy.counts['drop-after-commit']).toBeGreaterThan(60);
  }, 120_000);
});
