/**
 * API latency end to end on the local stack (HTTP adapter → authorizer → handler →
 * DynamoDB Local, over a keep-alive connection) beside the bare store calls the same
 * operation makes, as it makes them (the key lookup and the rate-limit take together, then
 * the operation's own), timed back to back in the same run; and the handler's own overhead
 * in process with the stores faked.
 *
 *   npm run bench:api                (BENCH_API_ROUNDS=3, BENCH_API_SAMPLES=300 per round)
 *
 * Rounds, each measuring both operations and the handlers' own work; each verdict is the
 * median of the rounds' figures, printed with their range.
 */
import './lib/quiet';
import type { Context } from 'aws-lambda';
import { makeHandler as makeApprove } from '../functions/api/approve-job';
import { makeHandler as makeListCalls } from '../functions/api/list-calls';
import { hashKey, type Principal } from '../shared/domain/api-keys';
import { ingestCall, type CallRecord } from '../shared/domain/calls';
import { newEvent } from '../shared/domain/events';
import type { JobRecord } from '../shared/domain/jobs';
import { toAuthorizerContext } from '../shared/http/auth-context';
import type { ApiEvent } from '../shared/http/event';
import { SCOPES } from '../shared/domain/scopes';
import { keyBucket } from '../shared/domain/rate-limits';
import type { LocalDeps } from '../lib/local/wiring';
import { callIngest, startBenchStack } from './lib/stack';
import {
  ms,
  printTable,
  ratio,
  setting,
  spreadOf,
  summarize,
  timeEach,
  verdict,
  withSpread,
  type Summary,
} from './lib/stats';

const ROUNDS = setting('BENCH_API_ROUNDS', 3);
const SAMPLES = setting('BENCH_API_SAMPLES', 300);
const OVERHEAD_SAMPLES = 5000;
const RATIO_TARGET = 1.3;
const OVERHEAD_TARGET_MS = 1;

const bench = await startBenchStack();
try {
  const deps = bench.stack.deps;
  const shopId = bench.demo.shop.id;
  const key = bench.demo.writeKey.key;
  // Calls to list, and a pending job per approval (end to end and bare), ingested 8 at a time.
  const jobIds: string[] = [];
  const need = 2 * SAMPLES * ROUNDS + 20;
  for (let i = 0; i < need; i += 8) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(8, need - i) }, () => ingestCall(deps, callIngest(shopId, true))),
    );
    for (const r of batch) jobIds.push(...r.job_ids);
  }
  const warm = async (n: number, task: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < n; i++) await task(i);
  };

  // GET /v1/calls?limit=20: the key lookup and the rate-limit take, then one page query.
  const listHttp = async () => {
    const res = await bench.api('GET', '/v1/calls?limit=20', undefined, key);
    if (res.status !== 200) throw new Error(`list answered ${res.status}`);
  };
  const hash = hashKey(key);
  // What the authorizer asks of the table: the key, and a request from the key's rate-limit bucket, at once.
  const authorizerCalls = async () => {
    await Promise.all([
      deps.apiKeys.getByHash(hash),
      deps.rateLimiter.take(keyBucket(hash), deps.rateLimits.test, Date.now),
    ]);
  };
  const listBare = async () => {
    await authorizerCalls();
    await deps.calls.list(shopId, { limit: 20 });
  };
  await warm(20, listHttp);
  await warm(20, listBare);

  // POST /v1/jobs/{id}/approve: the key lookup and the rate-limit take, the job read, the conditional transaction.
  let next = 0;
  const approveHttp = async () => {
    const res = await bench.api('POST', `/v1/jobs/${jobIds[next++]}/approve`, { version: 1 }, key);
    if (res.status !== 200) throw new Error(`approve answered ${res.status}`);
  };
  const approveBare = async () => {
    await authorizerCalls();
    const job = (await deps.jobs.get(shopId, jobIds[next++] as string)) as JobRecord;
    const now = new Date().toISOString();
    const approved: JobRecord = {
      ...job,
      status: 'approved',
      version: job.version + 1,
      updated_at: now,
      decided_at: now,
    };
    const outcome = await deps.jobs.decide(
      approved,
      job.version,
      newEvent(shopId, 'job.approved', approved, new Date(now)),
    );
    if (!outcome.ok) throw new Error('bare approve refused');
  };
  await warm(5, approveHttp);
  await warm(5, approveBare);

  const operations = ['GET /v1/calls?limit=20', 'POST /v1/jobs/{id}/approve'] as const;
  const measured: { operation: string; round: number; e2e: Summary; store: Summary }[] = [];
  const overheads: { handler: string; round: number; s: Summary }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const [listE2e, listStore] = await interleaved(SAMPLES, listHttp, listBare);
    const [approveE2e, approveStore] = await interleaved(SAMPLES, approveHttp, approveBare);
    measured.push(
      { operation: operations[0], round, e2e: summarize(listE2e), store: summarize(listStore) },
      { operation: operations[1], round, e2e: summarize(approveE2e), store: summarize(approveStore) },
    );
    // The handler alone: middleware, validation, domain, response, with stores answering at once.
    for (const [handler, s] of await handlerOverhead(shopId, deps)) overheads.push({ handler, round, s });
  }

  printTable(
    `API end to end vs the bare store calls, per round (${SAMPLES} requests each a round, interleaved)`,
    ['operation, round', 'HTTP p50', 'HTTP p99', 'store p50', 'store p99', 'p50 ratio'],
    operations.flatMap((op) =>
      measured
        .filter((m) => m.operation === op)
        .map((m) => [
          `${op}, ${m.round}`,
          ms(m.e2e.p50, 2),
          ms(m.e2e.p99, 2),
          ms(m.store.p50, 2),
          ms(m.store.p99, 2),
          ratio(m.e2e.p50, m.store.p50),
        ]),
    ),
  );
  const x = (v: number) => v.toFixed(2);
  printTable(
    `API end to end vs the bare store calls: targets (the median of ${ROUNDS} rounds' p50 ratios, with their range)`,
    ['operation', 'p50 ratio', 'target', 'result'],
    operations.map((op) => {
      const r = spreadOf(measured.filter((m) => m.operation === op).map((m) => m.e2e.p50 / m.store.p50));
      return [op, withSpread(r, x, '×'), `≤ ${RATIO_TARGET}×`, verdict(r.median <= RATIO_TARGET)];
    }),
  );
  const handlers = [...new Set(overheads.map((o) => o.handler))];
  printTable(
    `Handler overhead in process, stores faked (${OVERHEAD_SAMPLES} invocations each a round; ` +
      `the median of ${ROUNDS} rounds, with their range)`,
    ['handler', 'p50 ms', 'p99 ms', 'target', 'result'],
    handlers.map((h) => {
      const mine = overheads.filter((o) => o.handler === h);
      const p50 = spreadOf(mine.map((o) => o.s.p50));
      const p99 = spreadOf(mine.map((o) => o.s.p99));
      const t = (v: number) => v.toFixed(3);
      return [
        h,
        withSpread(p50, t),
        withSpread(p99, t),
        `≤ ${OVERHEAD_TARGET_MS} ms p50`,
        verdict(p50.median <= OVERHEAD_TARGET_MS),
      ];
    }),
  );
} finally {
  await bench.close();
}

/** Alternates the two tasks so that drift on a shared machine weighs on both alike. */
async function interleaved(n: number, a: () => Promise<void>, b: () => Promise<void>): Promise<[number[], number[]]> {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < n; i++) {
    ta.push(...(await timeEach(1, a)));
    tb.push(...(await timeEach(1, b)));
  }
  return [ta, tb];
}

async function handlerOverhead(shopId: string, stack: LocalDeps) {
  const principal: Principal = { keyId: 'key_1', shopId, scopes: [...SCOPES], write: true, mode: 'test' } as Principal;
  const authorizer = { lambda: toAuthorizerContext({ ok: true, principal }) };
  const now = new Date('2026-11-21T10:00:00.000Z');
  const call: CallRecord = {
    id: 'call_01jd0000000000000000000000',
    shop_id: shopId,
    external_id: 'x',
    direction: 'inbound',
    status: 'completed',
    from_number: '+15551230000',
    to_number: '+15559870000',
    caller_name: 'Pat',
    started_at: now.toISOString(),
    ended_at: now.toISOString(),
    duration_seconds: 180,
    outcome: 'job_created',
    created_at: now.toISOString(),
  };
  const calls = Array.from({ length: 20 }, (_, i) => ({
    ...call,
    id: `call_01jd00000000000000000000${String(i).padStart(2, '0')}`,
  }));
  const job = {
    id: 'job_01jd0000000000000000000000',
    shop_id: shopId,
    call_id: call.id,
    status: 'pending',
    version: 1,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    decided_at: null,
    decline_reason: null,
    customer: { name: 'Pat', phone: '+15551230000', address: '12 Elm St' },
    service: 'Leak repair',
    description: 'Sink',
    urgency: 'routine',
    requested_window: null,
    trade: 'plumbing',
  } as unknown as JobRecord;
  const list = makeListCalls(() => ({
    calls: { list: async () => ({ items: calls, next: { pk: 'x', sk: 'y' } }) } as never,
    cursorKey: stack.cursorKey,
  }));
  const approve = makeApprove(() => ({
    jobs: { get: async () => job, decide: async () => ({ ok: true }) } as never,
    now: () => now,
    idempotency: stack.idempotency,
  }));
  const event = (method: string, path: string, body?: unknown): ApiEvent =>
    ({
      version: '2.0',
      routeKey: `${method} ${path}`,
      rawPath: path,
      rawQueryString: method === 'GET' ? 'limit=20' : '',
      headers: { 'content-type': 'application/json' },
      queryStringParameters: method === 'GET' ? { limit: '20' } : undefined,
      pathParameters: method === 'POST' ? { id: job.id } : undefined,
      body: body === undefined ? undefined : JSON.stringify(body),
      isBase64Encoded: false,
      requestContext: { requestId: 'bench', http: { method, path }, authorizer },
    }) as unknown as ApiEvent;
  const context = {} as Context;
  const measure = async (name: string, run: () => Promise<{ statusCode?: number }>) => {
    for (let i = 0; i < 500; i++) await run();
    const samples = await timeEach(OVERHEAD_SAMPLES, async () => {
      const out = await run();
      if (out.statusCode !== 200) throw new Error(`${name} answered ${out.statusCode}`);
    });
    return [name, summarize(samples)] as const;
  };
  return [
    await measure('listCalls (20 calls, next cursor signed)', () => list(event('GET', '/v1/calls'), context)),
    await measure('approveJob (body validated)', () =>
      approve(event('POST', `/v1/jobs/${job.id}/approve`, { version: 1 }), context),
    ),
  ];
}
