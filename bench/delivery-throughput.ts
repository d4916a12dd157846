/**
 * Delivery throughput of one consumer process (the deliver handler behind the local SQS
 * event source, batches of 10) to a local receiver that verifies every signature, beside
 * the floor measured in the same run: a process doing only what each delivery must do (one
 * keep-alive signed POST and the delivery row's update) at the same concurrency, through
 * the same SDK client (shared/wiring/clients.ts `dynamoOf`, built from the same environment).
 * The throughput is reported beside the floor without a target (on two cores the consumer and
 * DynamoDB Local share the CPU, so the ratio is that of their CPU per delivery:
 * bench:table-ops). The target is table requests per delivery ≤ 1.25: the design makes 1.2
 * (a row update per delivery, and per batch of 10 one BatchGetItem and one closing
 * transaction), and a batch the queue hands over short of 10 adds to it, so the line keeps
 * a margin above the design.
 *
 *   npm run bench:throughput         (BENCH_DELIVERIES=2000 per run, 3 pairs of runs)
 *
 * Same concurrency means the same number of webhook requests in flight, which is what
 * bounds a sender's rate against a receiver that takes a round trip to answer. By contract
 * an endpoint never has more than MAX_IN_FLIGHT (4) requests in flight
 * (shared/delivery/circuit.ts), so a consumer sending to one endpoint cannot be compared
 * with a 40-wide floor (it was: 0.16×). Here the deliveries go to 16 endpoints (one shop's
 * maximum), in blocks of 10 per endpoint, so each SQS batch holds one endpoint's
 * deliveries, as when a busy endpoint fills the queue; the consumer runs 10 batches at a
 * time: 10 endpoints × 4 = 40 requests in flight at most, as the floor's 40 workers. The
 * floor could instead run at 4, the consumer's concurrency on one endpoint, but that
 * measures one endpoint's cap, not the consumer's cost per delivery.
 *
 * Both run in a child process of their own (bench/lib/consumer-child.ts,
 * bench/lib/floor-child.ts), against the same receiver in this process, alternating
 * (consumer then floor, floor then consumer, consumer then floor), after one uncounted run of
 * each (500 deliveries) that warms DynamoDB Local's JVM: the figure is the median of the
 * three pairs' ratios. Every table and queue request the consumer sends is counted
 * at its clients, whatever the consumer's code does, and its batches are timed as
 * Lambda would bill them.
 */
import './lib/quiet';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { once } from 'node:events';
import { carryingEvent, messageOf, type DeliveryRecord } from '../shared/delivery/records';
import { newDelivery } from '../shared/delivery/fan-out';
import { newEvent, type EventRecord } from '../shared/domain/events';
import { createShop } from '../shared/domain/shop';
import { createEndpoint, MAX_ENDPOINTS_PER_SHOP } from '../shared/domain/webhook-endpoints';
import { SqsDeliveryQueue } from '../shared/delivery/aws/sqs-queue';
import { newId } from '../shared/ids';
import { DynamoDeliveryStore } from '../shared/delivery/dynamo/deliveries';
import { eventItem } from '../shared/store/events';
import { MAX_IN_FLIGHT } from '../shared/delivery/circuit';
import type { ConsumerReport } from './lib/consumer-child';
import { opsPerDelivery, printAllIn, printCost, tracesFor } from './lib/cost';
import type { FloorJob, FloorReport } from './lib/floor-child';
import { treeCpuMs } from './lib/cpu';
import { addTallies, newHandlerTally, type OpTally } from './lib/instrument';
import { FUNCTION_MEMORY_MB, FUNCTION_SYSTEM_LOG_LEVEL, FUNCTION_TRACING } from './lib/lambda-memory';
import { startPipelineEnv } from './lib/pipeline-env';
import { startReceiver } from './lib/receiver';
import { printTable, setting, sleep, spreadOf, verdict, withSpread } from './lib/stats';

const N = setting('BENCH_DELIVERIES', 2000);
const PAIRS = 3;
/** Deliveries per warm-up run (one consumer run and one floor run before the pairs, not counted). */
const WARMUP = 500;
const BATCH = 10;
const CONCURRENCY = 40;
const ENDPOINTS = MAX_ENDPOINTS_PER_SHOP;
const BATCHES_IN_FLIGHT = CONCURRENCY / MAX_IN_FLIGHT;
const BARE_SECONDS = 3;
const TABLE_REQUESTS_TARGET = 1.25;
if (BATCHES_IN_FLIGHT > ENDPOINTS)
  throw new Error("more batches in flight than endpoints: two batches would share an endpoint's in-flight limit");

const env = await startPipelineEnv();
const receiver = await startReceiver({ verify: true });
const bare = await startReceiver({ verify: false });
try {
  const deps = env.deps;
  const shop = await createShop(deps, { name: 'Throughput Shop', owner_email: 'tp@bench.test' });
  const targets: FloorJob['targets'] = {};
  const endpointIds: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const url = `${receiver.url}/${i}`;
    const endpoint = (await createEndpoint(deps, shop.id, {
      url,
      events: ['call.completed'],
      description: null,
    } as never)) as { id: string; secret: string };
    receiver.setSecret(endpoint.secret, `/${i}`);
    targets[endpoint.id] = { url, secret: endpoint.secret };
    endpointIds.push(endpoint.id);
  }

  // Each run's events and delivery rows (N, in blocks of BATCH per endpoint), written just before
  // it: a row written earlier would be due during the runs before it, and a consumer that pulls an
  // endpoint's due deliveries from the table (a success taking the backlog mark) would send it then.
  const eventsById = new Map<string, EventRecord>();
  const deliveries = new DynamoDeliveryStore(deps.db);
  let written = 0;
  const nextRun = async (size: number): Promise<DeliveryRecord[]> => {
    const r = written++;
    const now = new Date();
    const rows: DeliveryRecord[] = [];
    const events = [];
    for (let i = 0; i < size; i++) {
      const event = newEvent(shop.id, 'call.completed', { id: `call_${r}_${i}`, object: 'call' }, now);
      events.push(event);
      eventsById.set(event.id, event);
      rows.push(
        newDelivery(event, {
          id: newId('dlv', now.getTime()),
          endpointId: endpointIds[Math.floor(i / BATCH) % ENDPOINTS] as string,
          origin: 'fanout',
          now,
        }),
      );
    }
    for (let i = 0; i < events.length; i += 25) {
      await deps.db.doc.batchWrite({
        RequestItems: {
          [deps.db.tableName]: events.slice(i, i + 25).map((e) => ({ PutRequest: { Item: eventItem(e) } })),
        },
      });
    }
    await deliveries.createAll(rows);
    return rows;
  };

  const queue = new SqsDeliveryQueue(env.queues.api, env.queues.queueUrl);
  const consumerTable = new Map<string, OpTally>();
  const consumerSqs = new Map<string, OpTally>();
  const lambda = newHandlerTally();
  /** Each counted consumer run's table requests per delivery. */
  const requestsPerRun: number[] = [];
  let endpointsInBatches = 0;
  const logs = { bytes: 0, lines: 0 };
  let consumerSeconds = 0;
  const floorTable = new Map<string, OpTally>();
  const pairs: { consumer: number; floor: number }[] = [];
  const cpu: { consumer: CpuPerDelivery[]; floor: CpuPerDelivery[] } = { consumer: [], floor: [] };
  const consumerRun = async (consumerRows: DeliveryRecord[], counted: boolean) => {
    // As the fan-out sends them: each message carries its (small) event.
    await queue.send(consumerRows.map((d) => carryingEvent(messageOf(d), eventsById.get(d.event_id) as EventRecord)));
    const {
      rate,
      report,
      cpu: used,
    } = await timed<ConsumerReport>(consumerRows, 'bench/lib/consumer-child.ts', [String(BATCHES_IN_FLIGHT)], (child) =>
      child.send('report'),
    );
    // The long poll the child's stop cut off goes on in local-aws-sqs for up to its 1 s wait, and
    // would take the next run's first message (lib/local/queue-poller.ts): let it end first.
    await sleep(1_100);
    if (!counted) return rate;
    if (used) cpu.consumer.push(used);
    requestsPerRun.push(Object.values(report.table).reduce((n, t) => n + t.requests, 0) / consumerRows.length);
    addTallies(consumerTable, new Map(Object.entries(report.table)));
    addTallies(consumerSqs, new Map(Object.entries(report.sqs)));
    lambda.invocations += report.lambda.invocations;
    lambda.records += report.lambda.records;
    lambda.ms += report.lambda.ms;
    lambda.billedMs += report.lambda.billedMs;
    endpointsInBatches += report.endpointsInBatches;
    logs.bytes += report.logs.bytes;
    logs.lines += report.logs.lines;
    consumerSeconds += consumerRows.length / rate;
    return rate;
  };
  const floorRun = async (floorRows: DeliveryRecord[], counted: boolean) => {
    const job: FloorJob = { rows: floorRows, targets, concurrency: CONCURRENCY };
    const {
      rate,
      report,
      cpu: used,
    } = await timed<FloorReport>(floorRows, 'bench/lib/floor-child.ts', [], undefined, job);
    if (counted) addTallies(floorTable, new Map(Object.entries(report.table)));
    if (counted && used) cpu.floor.push(used);
    return rate;
  };
  // DynamoDB Local's JVM compiles its request paths as they are first used: the first run of a cold
  // emulator is slower whoever makes it.
  // Two warm-up runs (consumer, floor: not counted), then the pairs'.
  await consumerRun(await nextRun(WARMUP), false);
  await floorRun(await nextRun(WARMUP), false);
  for (let p = 0; p < PAIRS; p++) {
    const runConsumer = async () => consumerRun(await nextRun(N), true);
    const runFloor = async () => floorRun(await nextRun(N), true);
    // Alternate which goes first, so a drift over the run (a warmer JIT, a bigger table) weighs on both.
    if (p % 2 === 0) {
      const consumer = await runConsumer();
      pairs.push({ consumer, floor: await runFloor() });
    } else {
      const floor = await runFloor();
      pairs.push({ consumer: await runConsumer(), floor });
    }
  }
  const bareRate = await barePosts(bare.url);
  if (receiver.rejected > 0) throw new Error(`${receiver.rejected} requests failed verification`);

  const ratios = spreadOf(pairs.map((x) => x.consumer / x.floor));
  const delivered = PAIRS * N;
  const perDelivery = (m: Map<string, OpTally>) => [...m.values()].reduce((n, t) => n + t.requests, 0) / delivered;
  const consumerRequests = perDelivery(consumerTable);
  const floorRequests = perDelivery(floorTable);
  printTable(
    `Delivery throughput: consumer and floor, ${CONCURRENCY} requests in flight ` +
      `(${ENDPOINTS} endpoints × at most ${MAX_IN_FLIGHT}; consumer ${BATCHES_IN_FLIGHT} batches of ${BATCH}), ` +
      `${N} deliveries per run`,
    ['pair', 'consumer deliveries/s', 'floor deliveries/s', 'consumer vs floor'],
    pairs.map((x, i) => [
      `${i + 1}${i % 2 === 0 ? ' (consumer first)' : ' (floor first)'}`,
      x.consumer.toFixed(0),
      x.floor.toFixed(0),
      `${(x.consumer / x.floor).toFixed(2)}×`,
    ]),
  );
  printTable(
    'Delivery throughput: targets',
    ['figure', 'consumer', 'same-run reference', 'target', 'result'],
    [
      [
        `throughput vs floor, median of ${PAIRS} pairs`,
        withSpread(ratios, (v) => v.toFixed(2), '×'),
        '1.00× (floor: signed POST + row update)',
        'reported, no target',
        '',
      ],
      [
        `table requests per delivery (hot path; all ${PAIRS} consumer runs, and each run's range)`,
        `${consumerRequests.toFixed(2)} ` +
          `(${Math.min(...requestsPerRun).toFixed(2)}–${Math.max(...requestsPerRun).toFixed(2)})`,
        `${floorRequests.toFixed(2)} (floor)`,
        `≤ ${TABLE_REQUESTS_TARGET}`,
        verdict(consumerRequests <= TABLE_REQUESTS_TARGET),
      ],
      [`bare POST loop, no verification (for scale, ${BARE_SECONDS} s)`, `${bareRate.toFixed(0)}/s`, '', '', ''],
    ],
  );
  if (cpu.consumer.length > 0 && cpu.floor.length > 0) {
    const mean = (xs: CpuPerDelivery[], k: keyof CpuPerDelivery) => xs.reduce((n, x) => n + x[k], 0) / xs.length;
    const row = (name: string, k: keyof CpuPerDelivery) => {
      const [c, f] = [mean(cpu.consumer, k), mean(cpu.floor, k)];
      return [name, c.toFixed(2), f.toFixed(2), (c - f).toFixed(2)];
    };
    const total = (xs: CpuPerDelivery[]) => xs.reduce((n, x) => n + x.dynamodb + x.child + x.bench, 0) / xs.length;
    printTable(
      'CPU ms per delivery, first to last receipt (mean of the runs; the machine has 2 cores)',
      ['process', 'consumer run', 'floor run', 'difference'],
      [
        row('DynamoDB Local (JVM)', 'dynamodb'),
        row("the run's own process (consumer or floor)", 'child'),
        row('this process (receiver verifying signatures, local SQS)', 'bench'),
        [
          'total',
          total(cpu.consumer).toFixed(2),
          total(cpu.floor).toFixed(2),
          (total(cpu.consumer) - total(cpu.floor)).toFixed(2),
        ],
      ],
    );
  }
  console.log(
    `Table requests per delivery: consumer ${opsPerDelivery(consumerTable, delivered)}; ` +
      `floor ${opsPerDelivery(floorTable, delivered)}`,
  );
  const consumerCost = printCost(
    'Consumer under load: per delivery, and at list prices per million',
    [
      {
        name: 'consumer',
        table: consumerTable,
        sqs: consumerSqs,
        lambda: {
          tally: lambda,
          memoryMb: FUNCTION_MEMORY_MB.Deliver,
          systemLogLevel: FUNCTION_SYSTEM_LOG_LEVEL.Deliver,
        },
        logs,
      },
    ],
    delivered,
  );
  printAllIn(
    'busy consumer',
    consumerCost,
    { traces: tracesFor(FUNCTION_TRACING.Deliver, lambda.invocations, consumerSeconds), kmsRequests: 0, schedules: 0 },
    delivered,
  );
  const batches = Math.max(1, lambda.invocations);
  console.log(
    `Lambda: ${lambda.invocations} invocations, ${(lambda.records / batches).toFixed(1)} messages and ` +
      `${(endpointsInBatches / batches).toFixed(1)} endpoints each; its ms are wall time per batch with ` +
      `${BATCHES_IN_FLIGHT} batches sharing one process, as in Lambda they would not.`,
  );
} finally {
  await receiver.close();
  await bare.close();
  await env.close();
}

/**
 * Starts a child (tsx), hands it `job` once it is ready, and times its deliveries at the
 * receiver, first to last verified receipt; then asks for its report (`ask`) or waits for it.
 */
async function timed<R>(
  rows: DeliveryRecord[],
  script: string,
  args: string[],
  ask?: (child: ChildProcess) => void,
  job?: FloorJob,
): Promise<{ rate: number; report: R; cpu: CpuPerDelivery | null }> {
  const expected = new Set(rows.map((r) => r.event_id));
  let first = 0;
  let last = 0;
  let cpuAtFirst: CpuSample | null = null;
  let cpuAtLast: CpuSample | null = null;
  receiver.onVerified = (eventId, at) => {
    if (!expected.delete(eventId)) return;
    if (first === 0) {
      first = at;
      cpuAtFirst = cpuSample(child.pid);
    }
    last = at;
    if (expected.size === 0) cpuAtLast = cpuSample(child.pid);
  };
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env.env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const messages: unknown[] = [];
  child.on('message', (m) => messages.push(m));
  try {
    const deadline = Date.now() + 300_000;
    while (!messages.includes('ready') && child.exitCode === null && Date.now() < deadline) await sleep(10);
    if (job) child.send(job);
    while (expected.size > 0 && Date.now() < deadline && child.exitCode === null) await sleep(10);
    if (expected.size > 0) throw new Error(`${script}: ${rows.length - expected.size} of ${rows.length} delivered`);
    ask?.(child);
    while (messages.length < 2 && Date.now() < deadline && child.exitCode === null) await sleep(10);
    const report = messages[1] as R | undefined;
    if (!report) throw new Error(`${script} sent no report`);
    return {
      rate: ((rows.length - 1) * 1000) / (last - first),
      report,
      cpu: cpuPerDelivery(cpuAtFirst, cpuAtLast, rows.length - 1),
    };
  } finally {
    // Each child exits once it has sent its report; a stuck one is ended.
    const deadline = Date.now() + 5_000;
    while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) await sleep(10);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
}

interface CpuSample {
  dynamodb: number | null;
  child: number | null;
  bench: number;
}
/**
 * CPU ms per delivery, first to last receipt: DynamoDB Local's JVM, the run's process, and this one (receiver,
 * local SQS).
 */
export type CpuPerDelivery = Record<keyof CpuSample, number>;

function cpuSample(childPid: number | undefined): CpuSample {
  const own = process.cpuUsage();
  return {
    dynamodb: treeCpuMs(env.dynamodb.pid),
    child: childPid === undefined ? null : treeCpuMs(childPid),
    bench: (own.user + own.system) / 1000,
  };
}

function cpuPerDelivery(a: CpuSample | null, b: CpuSample | null, n: number): CpuPerDelivery | null {
  if (!a || !b || a.dynamodb === null || b.dynamodb === null || a.child === null || b.child === null || n <= 0)
    return null;
  return { dynamodb: (b.dynamodb - a.dynamodb) / n, child: (b.child - a.child) / n, bench: (b.bench - a.bench) / n };
}

/** Keep-alive POSTs to a receiver that answers 204 without verifying, same concurrency. */
async function barePosts(url: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ hello: 'world' });
  const stopAt = performance.now() + BARE_SECONDS * 1000;
  let done = 0;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < stopAt) {
        await post();
        done++;
      }
    }),
  );
  agent.destroy();
  return (done * 1000) / (performance.now() - t);
}
