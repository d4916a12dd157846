/**
 * Noisy neighbour: does a receiver that hangs or fails slow down deliveries to a healthy
 * one? The healthy receiver's latency (event written → verified receipt) is measured in
 * runs, each on a fresh local stack in this process:
 *
 *   1. one shop, one healthy endpoint (the baseline);
 *   2. the same plus, in the same shop, an endpoint that never answers (the delivery
 *      timeout is the default 10 s), one that answers 500, and one with `rate_limit: 3` that
 *      gets every event too (at 5/s, a backlog that grows through the run; the run then
 *      waits for it to drain, to count what its deliveries cost);
 *      beside them an endpoint with `ordering: "per_resource"` whose first delivery fails:
 *      it gets a job's job.created and job.approved for every fifth healthy event, and the
 *      failed job.created holds its job.approved (its retry is a minute out);
 *   3. the hanging endpoint in another shop, sent test events while the healthy shop's
 *      events flow.
 *
 *   npm run bench:noisy   (BENCH_EVENTS=80, BENCH_INTERVAL_MS=200, BENCH_ROUNDS=5, BENCH_TEST_EVENTS=64,
 *                          BENCH_SETTLE_MS=30000)
 *
 * The three runs are repeated in rounds, each round in another order, and each run is
 * compared with its own round's baseline; the verdict takes the median over the rounds,
 * printed with their range. Five rounds, because the same-shop ratio sits near its line and a
 * median of three moves between identical runs.
 * On this shared 2-vCPU VM the host steals 20–60 % of the CPU in bursts (vmstat `st`), and
 * five baseline runs in a row measured p50s from 144 ms to 2,024 ms: a single pair of runs
 * says more about the bursts than about isolation.
 *
 * Events are written at 5/s. Run 2 makes four deliveries of each, about 18 table requests
 * per event against the baseline's 8 (the table below prints them), all served by the one
 * DynamoDB Local; at 10/s a steal burst pushed that emulator past its capacity in run 2 and
 * not in the baseline, and the figure measured the emulator's backlog (docs/performance.md).
 * A run ends when the healthy receiver has every event, or BENCH_SETTLE_MS after the last
 * write; the bad endpoints' retries are not waited for. Targets (docs/api.md, Isolation and
 * the circuit): healthy p50 ≤ 1.5× and p90 ≤ 2× the baseline's; the hanging
 * receiver gets at most 25 requests in a run (a small per-endpoint in-flight limit and a
 * circuit that opens after 5 consecutive failures).
 */
import './lib/quiet';
import { issueKey } from '../shared/domain/api-keys';
import { ingestCall } from '../shared/domain/calls';
import { createShop, type Shop } from '../shared/domain/shop';
import { SCOPES } from '../shared/domain/scopes';
import {
  answers,
  closeFaultReceivers,
  startFaultReceiver,
  type AnswerPolicy,
  type FaultReceiver,
} from './lib/fault-receiver';
import { callIngest, startBenchStack, type BenchStack } from './lib/stack';
import { countCalls, type OpTally } from './lib/instrument';
import { countedApart, startOrderedJobs, type OrderedJobs } from './lib/ordered-jobs';
import { countPerEndpoint, type EndpointTally } from './lib/per-endpoint';
import { DynamoEventStore } from '../shared/store/events';
import { mostInOneSecond, percentile, printTable, sleep, setting, spreadOf, verdict, withSpread } from './lib/stats';

const EVENTS = setting('BENCH_EVENTS', 80);
const INTERVAL_MS = setting('BENCH_INTERVAL_MS', 200);
const ROUNDS = setting('BENCH_ROUNDS', 5);
const TEST_EVENTS = setting('BENCH_TEST_EVENTS', 64);
const SETTLE_MS = setting('BENCH_SETTLE_MS', 30_000);
const WARMUP = 10;
const HANGING_MAX = 25;
/** The rate-limited endpoint's `rate_limit` (run 2). */
const RATE = 3;

interface Tenant {
  shop: Shop;
  key: string;
}

interface RunResult {
  /** Latency per event, sorted; Infinity for events not received within the wait. */
  latencies: number[];
  receivers: Record<string, FaultReceiver>;
  seconds: number;
  /** Where the healthy endpoint's time went, per event (ms, sorted): see stagesOf. */
  stages: Record<Stage, number[]>;
  /**
   * Table requests by operation from the first healthy event to the end of the run (every tenant's,
   * warm-up included).
   */
  requests: Map<string, number>;
  /** Writes to each endpoint's item and queue messages for its deliveries, by endpoint id (warm-up included). */
  perEndpoint: Map<string, EndpointTally>;
  /** Run 2's ordered endpoint: its jobs, what arrived, what was held at the end, and what its chains cost. */
  ordered?: OrderedSummary;
}

interface OrderedSummary {
  jobs: number;
  delivered: number;
  heldAtEnd: number;
  outOfOrder: number;
  /** Write (and read) units of the chains' requests: joins, leaves, holds, releases. */
  writeUnits: number;
  readUnits: number;
}

/** Each written event's shop, to find its delivery rows. */
const shopOfEvent = new Map<string, string>();

const STAGES = ['stream and fan-out', 'queue and consumer', 'request to receipt'] as const;
type Stage = (typeof STAGES)[number];

/**
 * The healthy endpoint's latency split at its delivery row's times (wall clock, this process):
 * event written → row created (stream read, fan-out) → first attempt started (queue, consumer
 * batch, admission, deferrals) → verified receipt (signing, POST, receiver).
 */
async function stagesOf(
  written: Map<string, number>,
  receiver: FaultReceiver & { id?: string },
): Promise<Record<Stage, number[]>> {
  const toWall = Date.now() - performance.now();
  const out: Record<Stage, number[]> = { 'stream and fan-out': [], 'queue and consumer': [], 'request to receipt': [] };
  const deps = tableDeps();
  for (const [eventId, t0] of written) {
    const received = receiver.firstOk.get(eventId);
    const row = (await deps.deliveries.listForEvent(shopOfEvent.get(eventId) ?? '', eventId)).find(
      (d) => d.endpoint_id === receiver.id,
    );
    const first = row?.history[0];
    if (!row || !first || received === undefined) continue;
    const created = Date.parse(row.created_at) - toWall;
    const attempted = Date.parse(first.at) - toWall;
    out['stream and fan-out'].push(created - t0);
    out['queue and consumer'].push(attempted - created);
    out['request to receipt'].push(received - attempted);
  }
  for (const s of STAGES) out[s].sort((a, b) => a - b);
  return out;
}

async function endpoint(
  bench: BenchStack,
  t: Tenant,
  name: string,
  policy: AnswerPolicy,
  extra: Record<string, unknown> = {},
): Promise<FaultReceiver & { id: string }> {
  const receiver = await startFaultReceiver(name, policy);
  const created = await bench.api(
    'POST',
    '/v1/webhook-endpoints',
    { url: receiver.url, events: ['call.completed'], ...extra },
    t.key,
  );
  if (created.status !== 201) throw new Error(`could not create endpoint ${name}: ${JSON.stringify(created.json)}`);
  const { id, secret } = created.json as { id: string; secret: string };
  receiver.setSecret(secret);
  return Object.assign(receiver, { id });
}

/** The table of the stack now running (each run starts its own). */
let live: BenchStack | undefined;
const tableDeps = () => {
  if (!live) throw new Error('no bench stack is running');
  return live.stack.deps;
};

/** Ingests one call; its event's write time is when the ingest transaction is issued. */
async function emit(t: Tenant, writtenAt: Map<string, number>): Promise<string> {
  const deps = tableDeps();
  let t0 = 0;
  const calls = {
    ...deps.calls,
    record: (batch: Parameters<typeof deps.calls.record>[0]) => ((t0 = performance.now()), deps.calls.record(batch)),
  };
  const result = await ingestCall({ calls, shops: deps.shops, now: deps.now }, callIngest(t.shop.id, false));
  const id = result.event_ids[0] as string;
  writtenAt.set(id, t0);
  shopOfEvent.set(id, t.shop.id);
  return id;
}

/** `count` events at a steady pace (open loop, as calls finish in a real shop). */
async function paced(count: number, intervalMs: number, one: (i: number) => Promise<unknown>): Promise<void> {
  const started = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    pending.push(one(i));
    const wait = started + (i + 1) * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(pending);
}

async function waitFor(receiver: FaultReceiver, ids: Iterable<string>, timeoutMs: number): Promise<void> {
  const want = [...ids];
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline && want.some((id) => !receiver.firstOk.has(id))) await sleep(20);
}

/** A fresh stack, the demo shop's healthy endpoint warmed up, then `measure`. */
async function run(
  measure: (
    bench: BenchStack,
    demo: Tenant,
    healthy: FaultReceiver,
  ) => Promise<{ written: Map<string, number>; receivers: Record<string, FaultReceiver>; ordered?: OrderedJobs }>,
): Promise<RunResult> {
  const started = performance.now();
  const bench = await startBenchStack({ timeScale: 1 });
  live = bench;
  try {
    const demo = { shop: bench.demo.shop, key: bench.demo.writeKey.key };
    const healthy = await endpoint(bench, demo, 'healthy', answers.ok());
    const table = countCalls(bench.stack.deps.db.doc);
    countedApart(bench.stack.deps.order);
    const perEndpoint = countPerEndpoint(bench.stack.deps.db.doc, bench.stack.sqsApi);
    const { written, receivers, ordered } = await measure(bench, demo, healthy);
    const requests = new Map([...table.calls].sort((a, b) => b[1] - a[1]));
    const target = receivers.healthy ?? healthy;
    return {
      latencies: [...written].map(([id, t0]) => (target.firstOk.get(id) ?? Infinity) - t0).sort((a, b) => a - b),
      receivers: { ...receivers, healthy: target },
      seconds: (performance.now() - started) / 1000,
      stages: await stagesOf(written, target),
      requests,
      perEndpoint,
      ...(ordered ? { ordered: await summarizeOrdered(ordered, table.stages.get('order')) } : {}),
    };
  } finally {
    await closeFaultReceivers(); // drops hung requests, so the consumer stops at once
    await bench.close();
  }
}

async function warmUp(t: Tenant, receiver: FaultReceiver): Promise<void> {
  const warm = new Map<string, number>();
  for (let i = 0; i < WARMUP; i++) await emit(t, warm);
  await waitFor(receiver, warm.keys(), 30_000);
}

async function newTenant(name: string): Promise<Tenant> {
  const shop = await createShop(tableDeps(), { name, owner_email: 'owner@noisy.test' });
  const { key } = await issueKey(tableDeps().apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  return { shop, key };
}

/**
 * Healthy events paced (and a job for the ordered endpoint with every fifth); resolves when the
 * healthy receiver has them all or SETTLE_MS after the last write.
 */
async function healthyTraffic(t: Tenant, healthy: FaultReceiver, ordered?: OrderedJobs): Promise<Map<string, number>> {
  const written = new Map<string, number>();
  await paced(EVENTS, INTERVAL_MS, (i) =>
    Promise.all([emit(t, written), ordered && i % 5 === 0 ? ordered.writeJob() : undefined]),
  );
  await waitFor(healthy, written.keys(), SETTLE_MS);
  return written;
}

// Run 1: the baseline.
const baselineRun = () =>
  run(async (_bench, demo, healthy) => {
    await warmUp(demo, healthy);
    return { written: await healthyTraffic(demo, healthy), receivers: { healthy } };
  });

// Run 2: a hanging and a failing endpoint in the same shop.
const sameShopRun = () =>
  run(async (bench, demo, healthy) => {
    await warmUp(demo, healthy);
    const hanging = await endpoint(bench, demo, 'hanging', answers.hang());
    const failing = await endpoint(bench, demo, 'failing', answers.status(500));
    let failed = false;
    const firstFails: AnswerPolicy = () => (failed ? 204 : ((failed = true), 500));
    const ordered = await startOrderedJobs(
      {
        shopId: demo.shop.id,
        createEndpoint: (body) => bench.api('POST', '/v1/webhook-endpoints', body, demo.key),
        putEvent: (e) => new DynamoEventStore(tableDeps().db).put(e),
        rowsOf: (eventId) => tableDeps().deliveries.listForEvent(demo.shop.id, eventId),
      },
      'ordered',
      firstFails,
    );
    const limited = await endpoint(bench, demo, 'rate-limited', answers.ok(), { rate_limit: RATE });
    const written = await healthyTraffic(demo, healthy, ordered);
    await waitFor(limited, written.keys(), SETTLE_MS + (EVENTS * 1000) / RATE);
    return { written, receivers: { healthy, hanging, failing, ordered: ordered.receiver, limited }, ordered };
  });

// Run 3: the hanging endpoint in another shop (the demo shop), sent test events; the healthy endpoint in shop B.
const otherShopRun = () =>
  run(async (bench, demo) => {
    const b = await newTenant('Shop B');
    const healthy = await endpoint(bench, b, 'healthy-b', answers.ok());
    await warmUp(b, healthy);
    const hanging = await endpoint(bench, demo, 'hanging', answers.hang());
    const testEvents = paced(TEST_EVENTS, (EVENTS * INTERVAL_MS) / TEST_EVENTS, async () => {
      // Paced under the per-key rate limit; a 429 would be retried a second later.
      for (let tries = 0; tries < 5; tries++) {
        const r = await bench.api('POST', `/v1/webhook-endpoints/${hanging.id}/test`, undefined, demo.key);
        if (r.status === 202) return;
        if (r.status !== 429) throw new Error(`test event refused: ${r.status} ${JSON.stringify(r.json)}`);
        await sleep(1000);
      }
    });
    await sleep(250); // shop A's test events are already queued when shop B's calls come
    const written = await healthyTraffic(b, healthy);
    await testEvents;
    return { written, receivers: { healthy, hanging } };
  });

/**
 * What run 2's ordered endpoint got, and what its chains cost in the table's units (as DynamoDB
 * reports them, or estimated).
 */
async function summarizeOrdered(
  ordered: OrderedJobs,
  tallies: Map<string, OpTally> | undefined,
): Promise<OrderedSummary> {
  const units = (ops: string[]) => ops.reduce((n, op) => n + (tallies?.get(op)?.units ?? 0), 0);
  return {
    jobs: ordered.accepted.length,
    delivered: ordered.accepted.length * 2 - ordered.lost().length,
    heldAtEnd: await ordered.heldNow(),
    outOfOrder: ordered.outOfOrder().length,
    writeUnits: units(['UpdateItem', 'TransactWriteItems']),
    readUnits: units(['GetItem']),
  };
}

type Config = '1' | '2' | '3';
const RUN_OF: Record<Config, () => Promise<RunResult>> = { '1': baselineRun, '2': sameShopRun, '3': otherShopRun };
// Each round starts with another run, so the machine's drift weighs on every run alike.
const ORDERS: Config[][] = [
  ['1', '2', '3'],
  ['2', '3', '1'],
  ['3', '1', '2'],
];
const results: Record<Config, RunResult[]> = { '1': [], '2': [], '3': [] };
for (let round = 0; round < ROUNDS; round++)
  for (const c of ORDERS[round % ORDERS.length] as Config[]) results[c].push(await RUN_OF[c]());

const settleS = SETTLE_MS / 1000;
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : `> ${settleS} s`);
const stats = (l: number[]) => ({
  p50: percentile(l, 50),
  p90: percentile(l, 90),
  p99: percentile(l, 99),
  max: l[l.length - 1] ?? Infinity,
});
const LABELS: Record<Config, string> = {
  '1': '1. baseline: one healthy endpoint',
  '2': '2. + hanging, 500 and ordered endpoints, same shop',
  '3': `3. hanging endpoint in another shop (${TEST_EVENTS} test events)`,
};
/** Per round, a run's p50 and p90 over the same round's baseline; the verdict takes the median of the rounds. */
const ratios = (c: Config) =>
  results[c].map((r, i) => {
    const s = stats(r.latencies);
    const base = stats((results['1'][i] as RunResult).latencies);
    return { p50: s.p50 / base.p50, p90: s.p90 / base.p90, delivered: r.latencies.every(Number.isFinite) };
  });
const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '∞');
const rows = (['1', '2', '3'] as Config[]).flatMap((c) =>
  results[c].map((r, i) => {
    const s = stats(r.latencies);
    const q = ratios(c)[i];
    return [
      `${LABELS[c]}, round ${i + 1}`,
      `${r.latencies.filter(Number.isFinite).length}/${r.latencies.length}`,
      fmt(s.p50),
      fmt(s.p90),
      fmt(s.p99),
      fmt(s.max),
      c === '1' ? '' : x(q?.p50 ?? Infinity),
      c === '1' ? '' : x(q?.p90 ?? Infinity),
    ];
  }),
);
printTable(
  'Noisy neighbour: healthy endpoint, event written → verified receipt, ms ' +
    `(${EVENTS} events, one every ${INTERVAL_MS} ms; ${ROUNDS} rounds)`,
  ['run', 'delivered', 'p50', 'p90', 'p99', 'max', "p50 vs round's baseline", "p90 vs round's baseline"],
  rows,
);
const verdictRow = (c: Config) => {
  const q = ratios(c);
  const p50 = spreadOf(q.map((r) => r.p50));
  const p90 = spreadOf(q.map((r) => r.p90));
  const times = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '∞');
  return [
    LABELS[c],
    withSpread(p50, times, '×'),
    withSpread(p90, times, '×'),
    'p50 ≤ 1.5×, p90 ≤ 2×',
    verdict(q.every((r) => r.delivered) && p50.median <= 1.5 && p90.median <= 2),
  ];
};
printTable(
  `Targets: the median over the ${ROUNDS} rounds of each run's ratio to its round's baseline, with their range`,
  ['run', 'p50 vs baseline', 'p90 vs baseline', 'target', 'result'],
  [verdictRow('2'), verdictRow('3')],
);

const count = (r: RunResult, name: string) => r.receivers[name]?.requests ?? 0;
const most = (c: Config, name: string) => Math.max(...results[c].map((r) => count(r, name)));
printTable(
  'Requests the bad receivers got, the most in any one run',
  ['run', 'receiver', 'requests', 'target', 'result'],
  [
    [
      '2',
      'hanging (never answers; timeout 10 s)',
      most('2', 'hanging'),
      `≤ ${HANGING_MAX}`,
      verdict(most('2', 'hanging') <= HANGING_MAX),
    ],
    ['2', 'failing (answers 500)', most('2', 'failing'), '', ''],
    [
      '3',
      'hanging, other shop',
      most('3', 'hanging'),
      `≤ ${HANGING_MAX}`,
      verdict(most('3', 'hanging') <= HANGING_MAX),
    ],
  ],
);
printTable(
  "Run 2's ordered endpoint (ordering per_resource; its first delivery fails, retried a minute later): " +
    "a job's job.created and job.approved with every fifth healthy event",
  [
    'round',
    'jobs',
    'events delivered',
    'held at the end',
    'out of order',
    'write units per ordered delivery',
    'read units per ordered delivery',
    'target',
    'result',
  ],
  results['2'].map((r, i) => {
    const o = r.ordered as OrderedSummary;
    const perDelivery = (u: number) => (o.jobs > 0 ? (u / (2 * o.jobs)).toFixed(2) : '-');
    return [
      i + 1,
      o.jobs,
      `${o.delivered}/${2 * o.jobs}`,
      o.heldAtEnd,
      o.outOfOrder,
      perDelivery(o.writeUnits),
      perDelivery(o.readUnits),
      '0 out of order',
      verdict(o.outOfOrder === 0),
    ];
  }),
);
printTable(
  `The rate-limited endpoint (rate_limit: ${RATE}, sent the same ${EVENTS} events ` +
    `at ${(1000 / INTERVAL_MS).toFixed(0)}/s) beside the healthy one, in run 2`,
  ['round', 'delivered', 'most started in any 1 s', 'target', 'result'],
  results['2'].map((r, i) => {
    const most = mostInOneSecond((r.receivers.limited?.receipts ?? []).map((x) => x.at));
    const delivered = r.receivers.limited?.firstOk.size ?? 0;
    return [
      i + 1,
      `${delivered}/${EVENTS}`,
      most,
      `≤ ${RATE}, all delivered`,
      verdict(most <= RATE && delivered === EVENTS),
    ];
  }),
);
printTable(
  "What the rate limit costs per delivery, in run 2: writes to the endpoint's own item " +
    "(admissions, attempts' ends) and queue messages",
  ['round', 'endpoint', 'item writes', 'write units', 'queue messages', 'extra write units vs healthy'],
  results['2'].flatMap((r, i) => {
    const per = (name: string) => {
      const rec = r.receivers[name] as (FaultReceiver & { id?: string }) | undefined;
      const t = r.perEndpoint.get(rec?.id ?? '');
      const n = Math.max(1, rec?.firstOk.size ?? 0);
      return { writes: (t?.writes ?? 0) / n, units: (t?.units ?? 0) / n, messages: (t?.messages ?? 0) / n };
    };
    const h = per('healthy');
    const l = per('limited');
    return [
      [i + 1, 'healthy (no rate limit)', h.writes.toFixed(2), h.units.toFixed(2), h.messages.toFixed(2), ''],
      [
        i + 1,
        `rate_limit: ${RATE}`,
        l.writes.toFixed(2),
        l.units.toFixed(2),
        l.messages.toFixed(2),
        (l.units - h.units).toFixed(2),
      ],
    ];
  }),
);
const runs: [string, RunResult][] = (['1', '2', '3'] as Config[]).flatMap((c) =>
  results[c].map((r, i): [string, RunResult] => [`${c}, round ${i + 1}`, r]),
);
printTable(
  'Table requests during each run, per healthy event ' +
    '(the one DynamoDB Local serves ingest, fan-out, consumer, API and sweeper alike)',
  ['run', 'per event', 'by operation'],
  runs.map(([n, r]) => [
    n,
    ([...r.requests.values()].reduce((a, b) => a + b, 0) / r.latencies.length).toFixed(1),
    [...r.requests].map(([op, c]) => `${op} ${(c / r.latencies.length).toFixed(1)}`).join(', '),
  ]),
);
printTable(
  "Where the healthy endpoint's time went, ms (p50 / p90 / max per stage, from its delivery rows)",
  ['run', ...STAGES],
  runs.map(([n, r]) => [
    n,
    ...STAGES.map((st) =>
      [50, 90]
        .map((q) => percentile(r.stages[st], q).toFixed(0))
        .concat((r.stages[st].at(-1) ?? 0).toFixed(0))
        .join(' / '),
    ),
  ]),
);
console.log(
  `\nRun times: ${runs.map(([n, r]) => `${n}: ${r.seconds.toFixed(0)} s`).join(', ')}. ` +
    `A run ends when the healthy receiver has all ${EVENTS} events, or ${settleS} s after the last write.`,
);
const rejected = runs.flatMap(([, r]) => Object.values(r.receivers)).reduce((n, r) => n + r.rejected, 0);
if (rejected > 0) throw new Error(`${rejected} requests failed signature verification`);
