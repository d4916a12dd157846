/**
 * Delivery latency: event item written → signed request received and verified, on the
 * local stack (DynamoDB Local, its stream, the local queue, the real handlers), beside the
 * floor measured in the same run: the store and network steps one delivery cannot avoid,
 * timed back to back with no polling waits, through the pipeline's own SDK clients (the
 * table's document client, the functions' and the event source's SQS clients). Target:
 * p99 ≤ 3× the floor's p50.
 *
 *   npm run bench:latency   (BENCH_LATENCY_ROUNDS=5, BENCH_EVENTS=400, BENCH_FLOOR_SAMPLES=150;
 *                            BENCH_INTERVAL_MS fixes the pace, which is otherwise set as below)
 *
 * One stack, warmed up once, then rounds: the floor, and right after it a measured run of
 * BENCH_EVENTS events. Each round's p99 is divided by its own floor, and the verdict is the
 * median of the rounds' ratios, printed with their range: on a shared machine one burst of
 * another job's work lands in one round, not in the verdict.
 *
 * The pace stays under what one DynamoDB Local sustains for the whole pipeline: past it the
 * figure measures the emulator's queue, not a delivery. After the warm-up, 100 events at one
 * every 40 ms measure the emulator's CPU per event (about 20 ms on a fast machine, 40 ms on a
 * slow one), and the rounds go at one event every 40 ms or, where that would take more than half
 * a core of the emulator, at the pace that keeps it at half a core. The benchmark prints the
 * emulator's CPU per event over the rounds too, to tell.
 *
 * The stack's fan-out and consumer handlers run wrapped (timed as Lambda bills them, their
 * requests filed under their stage), so it also prints where each event's time goes, per
 * stage (p50/p90/p99, and the slowest 1% of events), and what a delivered event costs:
 * table and SQS requests, Lambda ms, dollars per million at list prices beside
 * EventBridge's.
 */
import './lib/log-at-info';
import './lib/quiet';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ingestCall } from '../shared/domain/calls';
import { createShop } from '../shared/domain/shop';
import { newEvent } from '../shared/domain/events';
import { newDelivery } from '../shared/delivery/fan-out';
import { newId } from '../shared/ids';
import { localClient } from '../lib/local/dynamodb-local';
import type { LocalDeps } from '../lib/local/wiring';
import { observeTable } from '../shared/store/client';
import { signedHeaders } from '../shared/delivery/signer';
import { httpSender } from '../shared/delivery/sender';
import { skPrefix } from '../shared/store/keys';
import type { SQSEvent } from 'aws-lambda';
import { callIngest, startBenchStack } from './lib/stack';
import { allInParts, printAllIn, printCost, stageCost, totalCost, tracesFor, type StageUsage } from './lib/cost';
import { countLogBytes, logTallies, resetLogBytes } from './lib/log-bytes';
import { powertoolsMetrics } from '../shared/observability/metrics';
import { treeCpuMs } from './lib/cpu';
import { rowOnlyStore } from './lib/floor-store';
import {
  addTallies,
  countCalls,
  newHandlerTally,
  stage,
  timedHandler,
  type HandlerTally,
  type OpTally,
} from './lib/instrument';
import { FUNCTION_MEMORY_MB, FUNCTION_SYSTEM_LOG_LEVEL, FUNCTION_TRACING } from './lib/lambda-memory';
import { startReceiver } from './lib/receiver';
import {
  ms,
  printTable,
  ratio,
  setting,
  sleep,
  spreadOf,
  summarize,
  verdict,
  withSpread,
  type Summary,
} from './lib/stats';

const ROUNDS = setting('BENCH_LATENCY_ROUNDS', 5);
const EVENTS = setting('BENCH_EVENTS', 400);
const FIXED_INTERVAL = process.env.BENCH_INTERVAL_MS !== undefined;
/** The fastest pace: one event every this many ms. */
const MIN_INTERVAL_MS = setting('BENCH_INTERVAL_MS', 40);
/** The share of a core the emulator may take at the measured runs' pace. */
const EMULATOR_SHARE = 0.5;
const CALIBRATION_EVENTS = 100;
const FLOOR_SAMPLES = setting('BENCH_FLOOR_SAMPLES', 150);
const WARMUP = 30;

const P99_TARGET = 3;

// Each handler's invocations and wall time, and when the consumer was first handed each event's message.
const fanoutTally = newHandlerTally();
const consumerTally = newHandlerTally();
const consumerInvoked = new Map<string, number>();
const eventIdsOf = (event: SQSEvent) =>
  event.Records.map((r) => {
    try {
      return (JSON.parse(r.body) as { event_id?: string }).event_id;
    } catch {
      return undefined;
    }
  });
countLogBytes();
const bench = await startBenchStack({
  deliveryMetrics: powertoolsMetrics(),
  wrapHandlers: (h) => {
    const deliver = timedHandler('consumer', h.deliver, consumerTally);
    return {
      ...h,
      fanout: timedHandler('fan-out', h.fanout, fanoutTally),
      deliver: (event: SQSEvent) => {
        const at = performance.now();
        for (const id of eventIdsOf(event)) if (id && !consumerInvoked.has(id)) consumerInvoked.set(id, at);
        return deliver(event);
      },
    };
  },
});
const receiver = await startReceiver({ verify: true });
try {
  const created = await bench.api('POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['call.completed'] });
  if (created.status !== 201) throw new Error(`could not create the endpoint: ${JSON.stringify(created.json)}`);
  const secret = (created.json as { secret: string }).secret;
  receiver.setSecret(secret);

  const deps = bench.stack.deps;
  const writtenAt = new Map<string, number>();
  let latencies: number[] = [];
  let expect = new Set<string>();
  const verifiedAt = new Map<string, number>();
  receiver.onVerified = (eventId, at) => {
    const t0 = writtenAt.get(eventId);
    if (t0 !== undefined && expect.delete(eventId)) {
      latencies.push(at - t0);
      verifiedAt.set(eventId, at);
    }
  };

  /** Ingests one call (its transaction writes the call.completed event); t0 is when that write is issued. */
  const emit = async () => {
    let t0 = 0;
    const calls = {
      ...deps.calls,
      record: (batch: Parameters<typeof deps.calls.record>[0]) => ((t0 = performance.now()), deps.calls.record(batch)),
    };
    const result = await stage.run('ingest', () =>
      ingestCall({ calls, shops: deps.shops, now: deps.now }, callIngest(bench.demo.shop.id, false)),
    );
    const eventId = result.event_ids[0] as string;
    writtenAt.set(eventId, t0);
    expect.add(eventId);
  };
  const drain = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (expect.size > 0 && Date.now() < deadline) await sleep(5);
    if (expect.size > 0) throw new Error(`${expect.size} events were not delivered within ${timeoutMs} ms`);
  };

  // Warm-up: JIT, connection pools, the stream poller's shard discovery.
  for (let i = 0; i < WARMUP; i++) await emit();
  await drain(30_000);
  const emulatorCpu = () => (bench.stack.dynamodbPid === undefined ? null : treeCpuMs(bench.stack.dynamodbPid));

  /** `count` events one every `everyMs`, open loop (as calls finish in a real shop), until all are delivered. */
  const emitAtPace = async (count: number, everyMs: number) => {
    const started = performance.now();
    const writes: Promise<void>[] = [];
    // Held until the pace is done: a write failing meanwhile must not end the process as an unhandled rejection.
    const failed: unknown[] = [];
    for (let i = 0; i < count; i++) {
      writes.push(emit().catch((err: unknown) => void failed.push(err)));
      const wait = started + (i + 1) * everyMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
    await Promise.all(writes);
    if (failed.length > 0)
      throw new Error(`${failed.length} of ${count} ingests failed; the first: ${String(failed[0])}`);
    await drain(60_000);
    return performance.now() - started;
  };

  // The pace: the fastest, or slower where the emulator would take more than its share of a core.
  let intervalMs = MIN_INTERVAL_MS;
  const before = FIXED_INTERVAL ? null : emulatorCpu();
  if (before !== null) await emitAtPace(CALIBRATION_EVENTS, MIN_INTERVAL_MS);
  const after = before === null ? null : emulatorCpu();
  if (before !== null && after !== null) {
    const perEvent = (after - before) / CALIBRATION_EVENTS;
    intervalMs = Math.max(MIN_INTERVAL_MS, Math.ceil(perEvent / EMULATOR_SHARE));
    console.log(
      `Pace: one event every ${intervalMs} ms (DynamoDB Local took ${perEvent.toFixed(1)} ms of CPU an event ` +
        `over ${CALIBRATION_EVENTS} events at one every ${MIN_INTERVAL_MS} ms; at most ${EMULATOR_SHARE} of a core)`,
    );
  }

  // Counted in each round's measured run only (reset as it starts). Queue requests outside a handler are the event
  // sources' (and the owner emails' poller's).
  const queues = bench.stack.queue;
  const requests = countCalls(deps.db.doc);
  const sqsRequests = countCalls([bench.stack.sqs, bench.stack.sqsApi], {
    stageOf: (_op, input) => (input.QueueUrl === queues.url ? 'consumer' : undefined),
  });
  const stages = watchStages(deps.db);
  const cpuUsed = { emulatorMs: 0, benchMs: 0, wallMs: 0, events: 0, measured: true };
  const rounds: Round[] = [];
  const floorSteps: Record<string, number[]> = {};
  const streamReads: number[] = [];

  // Each round: the floor, then the measured run right after it, so both meet the machine in the same state.
  for (let round = 0; round < ROUNDS; round++) {
    const floor = await measureFloor(bench.stack, receiver.url, secret, deps, round);
    for (const [step, xs] of Object.entries(floor.steps)) (floorSteps[step] ??= []).push(...xs);
    streamReads.push(...floor.streamReads);

    // The measured run: events written at a steady pace (open loop), as calls finish in a real shop.
    expect = new Set();
    latencies = [];
    requests.reset();
    sqsRequests.reset();
    for (const t of [fanoutTally, consumerTally]) Object.assign(t, newHandlerTally());
    resetLogBytes();
    const cpuBefore = { emulator: emulatorCpu(), bench: process.cpuUsage() };
    const wallMs = await emitAtPace(EVENTS, intervalMs);
    const cpuAfter = { emulator: emulatorCpu(), bench: process.cpuUsage(cpuBefore.bench) };
    if (cpuBefore.emulator !== null && cpuAfter.emulator !== null) {
      cpuUsed.emulatorMs += cpuAfter.emulator - cpuBefore.emulator;
      cpuUsed.benchMs += (cpuAfter.bench.user + cpuAfter.bench.system) / 1000;
      cpuUsed.wallMs += wallMs;
      cpuUsed.events += latencies.length;
    } else cpuUsed.measured = false;
    // Settle: the last attempts are recorded after their receipts.
    await sleep(500);

    const usage = usageOfRun(requests.stages, sqsRequests.stages);
    const traces =
      tracesFor(FUNCTION_TRACING.Fanout, fanoutTally.invocations, wallMs / 1000) +
      tracesFor(FUNCTION_TRACING.Deliver, consumerTally.invocations, wallMs / 1000);
    const delivered = latencies.length;
    const total = totalCost(
      'total per delivery',
      usage.filter((u) => !u.outsideTotal).map((u) => stageCost(u, delivered)),
    );
    const outside = [...(requests.stages.get('') ?? new Map()), ...(sqsRequests.stages.get('') ?? new Map())]
      .map(([op, t]) => `${op} ${t.requests}`)
      .join(', ');
    rounds.push({
      floor: summarize(floor.steps.total ?? []).p50,
      latency: summarize(latencies),
      usage,
      outside,
      traces,
      allIn: allInParts(total, { traces, kmsRequests: 0, schedules: 0 }, delivered).all,
    });
  }

  printTable(
    `Delivery latency per round: event written → verified receipt ` +
      `(${EVENTS} events a round, one every ${intervalMs} ms; ` +
      `the floor, ${FLOOR_SAMPLES} samples, measured right before)`,
    ['round', 'floor p50 ms', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'p50 vs floor', 'p99 vs floor'],
    rounds.map((r, i) => [
      i + 1,
      ms(r.floor),
      ms(r.latency.p50),
      ms(r.latency.p90),
      ms(r.latency.p99),
      ms(r.latency.max),
      ratio(r.latency.p50, r.floor),
      ratio(r.latency.p99, r.floor),
    ]),
  );
  const p99 = spreadOf(rounds.map((r) => r.latency.p99 / r.floor));
  const p50 = spreadOf(rounds.map((r) => r.latency.p50 / r.floor));
  const x = (v: number) => v.toFixed(2);
  printTable(
    `Delivery latency: targets (the median of ${ROUNDS} rounds' ratios to their own floor, with their range)`,
    ['figure', 'vs floor p50', 'target', 'result'],
    [
      ['delivery p50', withSpread(p50, x, '×'), '', ''],
      ['delivery p99', withSpread(p99, x, '×'), `≤ ${P99_TARGET}×`, verdict(p99.median <= P99_TARGET)],
    ],
  );
  printStages(writtenAt, stages.rowWritten, consumerInvoked, verifiedAt, stages.consumerWrites);
  const reads = summarize(streamReads);
  console.log(`Stream reads until the record showed: p50 ${reads.p50}, max ${reads.max}`);
  if (cpuUsed.measured && cpuUsed.events > 0) {
    console.log(
      `CPU per event over the measured runs, write of the first to receipt of the last ` +
        `(${(cpuUsed.wallMs / 1000).toFixed(1)} s on 2 cores): ` +
        `DynamoDB Local ${(cpuUsed.emulatorMs / cpuUsed.events).toFixed(1)} ms ` +
        `(busy ${((100 * cpuUsed.emulatorMs) / cpuUsed.wallMs).toFixed(0)} % of one core), ` +
        `this process (stack, pollers, receiver) ${(cpuUsed.benchMs / cpuUsed.events).toFixed(1)} ms ` +
        `(${((100 * cpuUsed.benchMs) / cpuUsed.wallMs).toFixed(0)} %)`,
    );
  }
  printTable(
    `Floor steps (${FLOOR_SAMPLES} samples a round, ${ROUNDS} rounds pooled)`,
    ['step', 'p50 ms', 'p99 ms'],
    Object.entries(floorSteps).map(([name, xs]) => {
      const t = summarize(xs);
      return [name, ms(t.p50, 2), ms(t.p99, 2)];
    }),
  );

  // The cost is priced per round; the tables are the round whose all-in figure is the median (with an odd count, a
  // round's own figures, so the line npm run bench adds up is that median).
  const allIn = spreadOf(rounds.map((r) => r.allIn));
  const byAllIn = rounds.map((r, i) => ({ r, i })).sort((a, b) => a.r.allIn - b.r.allIn);
  const middle = byAllIn[Math.floor((byAllIn.length - 1) / 2)] as { r: Round; i: number };
  console.log(
    `\nSparse all-in per round, per million deliveries: ${withSpread(allIn, (v) => `$${v.toFixed(3)}`)}; ` +
      `the cost tables below are round ${middle.i + 1}'s, the median.`,
  );
  const total = printCost(
    `What a delivered event costs: one event every ${intervalMs} ms, one endpoint (round ${middle.i + 1})`,
    middle.r.usage,
    middle.r.latency.n,
  );
  printAllIn('sparse', total, { traces: middle.r.traces, kmsRequests: 0, schedules: 0 }, middle.r.latency.n);
  console.log(
    `Outside these stages during that round (sweeper, owner emails' poller; not per delivery): ` +
      `${middle.r.outside || 'none'}. Lambda's reads of the table's stream are free.`,
  );
  if (receiver.rejected > 0) throw new Error(`${receiver.rejected} deliveries failed verification`);
} finally {
  await receiver.close();
  await bench.close();
}

/** One round: its floor, its measured run's latencies, and what that run's deliveries cost. */
interface Round {
  /** The floor's p50, ms. */
  floor: number;
  latency: Summary;
  usage: StageUsage[];
  /** Requests outside any stage during the run (sweeper, owner emails' poller). */
  outside: string;
  traces: number;
  /** The all-in figure per million deliveries. */
  allIn: number;
}

/** A copy of the measured run's counts by stage, as printCost takes them (the counters are reset each round). */
function usageOfRun(
  table: ReadonlyMap<string, ReadonlyMap<string, OpTally>>,
  sqs: ReadonlyMap<string, ReadonlyMap<string, OpTally>>,
): StageUsage[] {
  const copy = (m: ReadonlyMap<string, OpTally> | undefined) => (m ? addTallies(new Map(), m) : undefined);
  const logsOf = (name: string) => {
    const t = logTallies.get(name);
    return t ? { ...t } : undefined;
  };
  const lambdaOf = (tally: HandlerTally, fn: 'Fanout' | 'Deliver') => ({
    tally: { ...tally },
    memoryMb: FUNCTION_MEMORY_MB[fn],
    systemLogLevel: FUNCTION_SYSTEM_LOG_LEVEL[fn],
  });
  return [
    { name: "ingest (the call's own write: not in the total)", table: copy(table.get('ingest')), outsideTotal: true },
    {
      name: 'fan-out',
      table: copy(table.get('fan-out')),
      sqs: copy(sqs.get('fan-out')),
      lambda: lambdaOf(fanoutTally, 'Fanout'),
      logs: logsOf('fan-out'),
    },
    {
      name: 'consumer',
      table: copy(table.get('consumer')),
      sqs: copy(sqs.get('consumer')),
      lambda: lambdaOf(consumerTally, 'Deliver'),
      logs: logsOf('consumer'),
    },
  ];
}

/**
 * Where each event's time goes, stage by stage, from the instants this process saw: the
 * ingest write issued, the fan-out's write of its delivery row, the consumer handed its
 * message, the receiver's verified receipt, and the consumer's next write of the row
 * (after the receipt, so outside the latency). Per stage p50/p90/p99, and the mean of each
 * stage over the slowest 1% of events: what the p99 is made of.
 */
function printStages(
  written: Map<string, number>,
  row: Map<string, number>,
  invoked: Map<string, number>,
  verified: Map<string, number>,
  consumerWrites: Map<string, number[]>,
) {
  const events = [...verified.keys()].filter((id) => written.has(id) && row.has(id) && invoked.has(id));
  const at = (m: Map<string, number>, id: string) => m.get(id) as number;
  const recorded = (id: string) => (consumerWrites.get(id) ?? []).find((t) => t >= at(verified, id));
  const steps: [string, (id: string) => number | undefined][] = [
    ['write issued → delivery row written (stream read + fan-out)', (id) => at(row, id) - at(written, id)],
    ['row written → consumer handed the message (queue send, poll, receive)', (id) => at(invoked, id) - at(row, id)],
    [
      'consumer first handed it → receipt verified ' +
        '(reads, admission, sign, POST; any deferral back through the queue)',
      (id) => at(verified, id) - at(invoked, id),
    ],
    [
      '(after the receipt) → attempt recorded on the row',
      (id) => {
        const t = recorded(id);
        return t === undefined ? undefined : t - at(verified, id);
      },
    ],
  ];
  const total = (id: string) => at(verified, id) - at(written, id);
  const byTotal = [...events].sort((a, b) => total(a) - total(b));
  const slowest = byTotal.slice(Math.floor(byTotal.length * 0.99));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const rows = steps.map(([name, f]) => {
    const all = summarize(events.map(f).filter((x): x is number => x !== undefined));
    const tail = slowest.map(f).filter((x): x is number => x !== undefined);
    return [name, ms(all.p50), ms(all.p90), ms(all.p99), ms(mean(tail))];
  });
  const t = summarize(events.map(total));
  rows.push([
    'write issued → receipt verified (the latency)',
    ms(t.p50),
    ms(t.p90),
    ms(t.p99),
    ms(mean(slowest.map(total))),
  ]);
  printTable(
    `Where the time goes (${events.length} events; ms per stage)`,
    ['stage', 'p50', 'p90', 'p99', `slowest 1% (${slowest.length}): mean`],
    rows,
  );
}

/**
 * A string attribute, marshalled ({ S }) or not (declared as a function: the top-level run calls it
 * before any const here exists).
 */
function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? undefined);
}

/** The sort keys a write request touches, whatever the operation (a store may batch or transact its writes). */
function writtenKeys(command: string, input: Record<string, unknown>): string[] {
  const sk = (item: unknown) => text((item as { sk?: unknown } | undefined)?.sk);
  const out: (string | undefined)[] = [];
  if (command === 'PutItemCommand') out.push(sk(input.Item));
  if (command === 'UpdateItemCommand' || command === 'DeleteItemCommand') out.push(sk(input.Key));
  if (command === 'BatchWriteItemCommand') {
    for (const reqs of Object.values(
      (input.RequestItems ?? {}) as Record<
        string,
        { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]
      >,
    )) {
      for (const r of reqs) out.push(sk(r.PutRequest?.Item ?? r.DeleteRequest?.Key));
    }
  }
  if (command === 'TransactWriteItemsCommand') {
    for (const t of (input.TransactItems ?? []) as {
      Put?: { Item: unknown };
      Update?: { Key: unknown };
      Delete?: { Key: unknown };
    }[])
      out.push(sk(t.Put?.Item ?? t.Update?.Key ?? t.Delete?.Key));
  }
  return out.filter((x): x is string => x !== undefined);
}

/**
 * When the fan-out first wrote each event's delivery row, and every time the consumer wrote it, from
 * the table client.
 */
function watchStages(table: LocalDeps['db']) {
  const rowWritten = new Map<string, number>();
  const consumerWrites = new Map<string, number[]>();
  const eventOfRow = new Map<string, string>();
  // Inside: the top-level run calls this before a module constant here would exist.
  const rowPrefix = skPrefix.endpointDeliveries('').slice(0, -1);
  // Observers run as the request settles, in the caller's async context: `stage` still says whose it was.
  observeTable(table, (operation, input, outcome) => {
    if (!('output' in outcome)) return;
    const now = performance.now();
    const current = stage.getStore();
    // Delivery rows: sk WD#<endpoint id>#<delivery id> (shared/store/keys.ts); the fan-out's put names the row's event.
    const put = (input as { Item?: Record<string, unknown> }).Item;
    const [putId, putEvent] = [text(put?.id), text(put?.event_id)];
    if (putId && putEvent && text(put?.entity) === 'delivery') eventOfRow.set(putId, putEvent);
    for (const sk of writtenKeys(`${operation}Command`, input as Record<string, unknown>)) {
      const id = sk.startsWith(rowPrefix) ? eventOfRow.get(sk.split('#')[2] ?? '') : undefined;
      if (!id) continue;
      if (current === 'fan-out' && !rowWritten.has(id)) rowWritten.set(id, now);
      if (current === 'consumer') consumerWrites.set(id, [...(consumerWrites.get(id) ?? []), now]);
    }
  });
  return { rowWritten, consumerWrites };
}

/**
 * The unavoidable steps of one delivery, each done once, back to back: the ingest
 * transaction (to a shop with no endpoints, so the pipeline stays idle), one stream read
 * that returns it, a queue send, receive and delete, the delivery row's create and its
 * attempt update (the row alone: bench/lib/floor-store.ts), and one signed POST over a
 * kept-alive connection.
 */
async function measureFloor(
  stack: Awaited<ReturnType<typeof startBenchStack>>['stack'],
  url: string,
  secret: string,
  deps: LocalDeps,
  round: number,
) {
  const shop = await createShop(deps, { name: `Floor Shop ${round + 1}`, owner_email: 'floor@bench.test' });
  // The pipeline's own SQS clients: the functions' (send) and the event source's (receive, delete),
  // on a queue of the floor's.
  const queueUrl = (await stack.sqsApi.send(new CreateQueueCommand({ QueueName: `bench-floor-${round + 1}` })))
    .QueueUrl as string;
  const streams = new DynamoDBStreamsClient({
    endpoint: stack.dynamodbEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const ddb = localClient(stack.dynamodbEndpoint);
  const streamArn = (await ddb.send(new DescribeTableCommand({ TableName: stack.tableName }))).Table
    ?.LatestStreamArn as string;
  const shards =
    (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
  const open = shards.find((sh) => !sh.SequenceNumberRange?.EndingSequenceNumber) ?? shards[shards.length - 1];
  let iterator = (
    await streams.send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: open?.ShardId, ShardIteratorType: 'LATEST' }),
    )
  ).ShardIterator;
  const deliveries = rowOnlyStore(deps.db);
  const streamReads: number[] = [];
  const sender = httpSender(deps.policy, 10_000);
  const steps: Record<string, number[]> = {
    'ingest transaction (call + event)': [],
    'stream read (GetRecords until it returns the record)': [],
    'queue send + receive + delete': [],
    'delivery row create + update': [],
    'signed keep-alive POST': [],
    total: [],
  };
  const timed = async <T>(name: string, task: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await task();
    steps[name]?.push(performance.now() - t);
    return out;
  };
  for (let i = 0; i < FLOOR_SAMPLES; i++) {
    const calls = {
      ...deps.calls,
      record: (batch: Parameters<typeof deps.calls.record>[0]) =>
        timed('ingest transaction (call + event)', () => deps.calls.record(batch)),
    };
    const { event_ids } = await ingestCall({ calls, shops: deps.shops, now: deps.now }, callIngest(shop.id, false));
    // Reads until the record is there: DynamoDB Local can take a few reads to show it.
    await timed('stream read (GetRecords until it returns the record)', async () => {
      for (let reads = 1; ; reads++) {
        const got = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
        iterator = got.NextShardIterator;
        if ((got.Records?.length ?? 0) > 0 || reads >= 1000) {
          streamReads.push(reads);
          return;
        }
      }
    });
    await timed('queue send + receive + delete', async () => {
      await stack.sqsApi.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ i }) }));
      const got = await stack.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }),
      );
      const handle = got.Messages?.[0]?.ReceiptHandle;
      if (handle) await stack.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: handle }));
    });
    const now = new Date();
    const event = { ...newEvent(shop.id, 'call.completed', {}, now), id: event_ids[0] as string };
    const row = newDelivery(event, { id: newId('dlv', now.getTime()), endpointId: 'we_floor', origin: 'fanout', now });
    await timed('delivery row create + update', async () => {
      await deliveries.createMissing([row]);
      const at = new Date().toISOString();
      await deliveries.recordAttempt(row, {
        status: 'succeeded',
        attempts: 1,
        last_attempt_at: at,
        next_attempt_at: null,
        sweep_at: null,
        last_response_status: 204,
        last_error: null,
        entry: { attempt: 1, at, status: 204, duration_ms: 1, error: null, response_snippet: null },
      });
    });
    await timed('signed keep-alive POST', () => {
      const body = JSON.stringify({ id: row.event_id, object: 'event', type: 'call.completed', data: {} });
      return sender.post(new URL(url), signedHeaders(row.event_id, body, [secret], new Date()), body);
    });
  }
  streams.destroy();
  const names = Object.keys(steps).filter((k) => k !== 'total');
  for (let i = 0; i < FLOOR_SAMPLES; i++) steps.total?.push(names.reduce((sum, k) => sum + (steps[k]?.[i] ?? 0), 0));
  return { streamReads, steps };
}
