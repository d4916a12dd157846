/**
 * Delivery latency: event item written → signed request received and verified, on the
 * local stack (DynamoDB Local, its stream, the local queue, the real handlers), beside the
 * floor measured in the same run: the store and network steps one delivery cannot avoid,
 * timed back to back with no polling waits, through the pipeline's own SDK clients (the
 * table's document client, the functions' and the event source's SQS clients). Target
 * (issue 28): p99 ≤ 3× the floor's p50.
 *
 *   npm run bench:latency            (BENCH_EVENTS=500, BENCH_INTERVAL_MS=40, BENCH_FLOOR_SAMPLES=200)
 *
 * The pace (25 events/s) is meant to stay under what one DynamoDB Local sustains for the
 * whole pipeline on a 2-core machine; past it the figure measures a queue, not a delivery.
 * The benchmark prints the emulator's CPU per event, to tell (about 20 ms on a quiet
 * machine: half a core at this pace).
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
import { newDelivery } from '../shared/delivery/deliveries';
import { newId } from '../shared/ids';
import { localClient } from '../lib/local/dynamodb-local';
import type { LocalDeps } from '../lib/local/wiring';
import { observeTable } from '../shared/store/client';
import { signedHeaders } from '../shared/delivery/signer';
import { httpSender } from '../shared/delivery/sender';
import { skPrefix } from '../shared/store/keys';
import type { SQSEvent } from 'aws-lambda';
import { callIngest, startBenchStack } from './lib/stack';
import { printAllIn, printCost, tracesFor } from './lib/cost';
import { countLogBytes, logTallies, resetLogBytes } from './lib/log-bytes';
import { powertoolsMetrics } from '../shared/observability/metrics';
import { treeCpuMs } from './lib/cpu';
import { rowOnlyStore } from './lib/floor-store';
import { countCalls, newHandlerTally, stage, timedHandler, type HandlerTally } from './lib/instrument';
import { FUNCTION_MEMORY_MB, FUNCTION_SYSTEM_LOG_LEVEL, FUNCTION_TRACING } from './lib/lambda-memory';
import { startReceiver } from './lib/receiver';
import { ms, printTable, ratio, setting, sleep, summarize, verdict } from './lib/stats';

const EVENTS = setting('BENCH_EVENTS', 500);
const INTERVAL_MS = setting('BENCH_INTERVAL_MS', 40);
const FLOOR_SAMPLES = setting('BENCH_FLOOR_SAMPLES', 200);
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
  const latencies: number[] = [];
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
  latencies.length = 0;

  const floor = await measureFloor(bench.stack, receiver.url, secret, deps);

  // The measured run: events written at a steady pace (open loop), as calls finish in a real shop.
  expect = new Set();
  // Counted from here: the measured run only. Queue requests outside a handler are the event sources' (and the owner emails' poller's).
  const queues = bench.stack.queue;
  const requests = countCalls(deps.db.doc);
  const sqsRequests = countCalls([bench.stack.sqs, bench.stack.sqsApi], {
    stageOf: (_op, input) => (input.QueueUrl === queues.url ? 'consumer' : undefined),
  });
  for (const t of [fanoutTally, consumerTally]) Object.assign(t, newHandlerTally());
  resetLogBytes();
  const stages = watchStages(deps.db);
  const emulatorCpu = () => (bench.stack.dynamodbPid === undefined ? null : treeCpuMs(bench.stack.dynamodbPid));
  const cpuBefore = { emulator: emulatorCpu(), bench: process.cpuUsage() };
  const started = performance.now();
  const writes: Promise<void>[] = [];
  // Held until the pace is done: a write failing meanwhile must not end the process as an unhandled rejection.
  const failed: unknown[] = [];
  for (let i = 0; i < EVENTS; i++) {
    writes.push(emit().catch((err: unknown) => void failed.push(err)));
    const next = started + (i + 1) * INTERVAL_MS;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(writes);
  if (failed.length > 0)
    throw new Error(`${failed.length} of ${EVENTS} ingests failed; the first: ${String(failed[0])}`);
  await drain(60_000);
  const wallMs = performance.now() - started;
  const cpuAfter = { emulator: emulatorCpu(), bench: process.cpuUsage(cpuBefore.bench) };
  // Settle: the last attempts are recorded after their receipts.
  await sleep(500);

  const s = summarize(latencies);
  const f = floor.total.p50;
  printTable(
    `Delivery latency: event written → verified receipt (${s.n} events, one every ${INTERVAL_MS} ms)`,
    ['figure', 'ms', 'vs floor', 'target', 'result'],
    [
      ['floor p50 (steps below, back to back)', ms(f), '1.00×', '', ''],
      ['delivery p50', ms(s.p50), ratio(s.p50, f), '', ''],
      ['delivery p90', ms(s.p90), ratio(s.p90, f), '', ''],
      ['delivery p99', ms(s.p99), ratio(s.p99, f), `≤ ${P99_TARGET}×`, verdict(s.p99 <= P99_TARGET * f)],
      ['delivery max', ms(s.max), ratio(s.max, f), '', ''],
    ],
  );
  printStages(writtenAt, stages.rowWritten, consumerInvoked, verifiedAt, stages.consumerWrites);
  console.log(`Stream reads until the record showed: p50 ${floor.streamReads.p50}, max ${floor.streamReads.max}`);
  if (cpuBefore.emulator !== null && cpuAfter.emulator !== null) {
    const emulatorMs = cpuAfter.emulator - cpuBefore.emulator;
    const benchMs = (cpuAfter.bench.user + cpuAfter.bench.system) / 1000;
    console.log(
      `CPU per event, write of the first to receipt of the last (${(wallMs / 1000).toFixed(1)} s on 2 cores): DynamoDB Local ${(emulatorMs / s.n).toFixed(1)} ms ` +
        `(busy ${((100 * emulatorMs) / wallMs).toFixed(0)} % of one core), this process (stack, pollers, receiver) ${(benchMs / s.n).toFixed(1)} ms (${((100 * benchMs) / wallMs).toFixed(0)} %)`,
    );
  }
  printTable(
    `Floor steps (${FLOOR_SAMPLES} samples each)`,
    ['step', 'p50 ms', 'p99 ms'],
    Object.entries(floor.steps).map(([name, x]) => [name, ms(x.p50, 2), ms(x.p99, 2)]),
  );
  const table = requests.stages;
  const sqs = sqsRequests.stages;
  const lambdaOf = (tally: HandlerTally, fn: 'Fanout' | 'Deliver') => ({
    tally,
    memoryMb: FUNCTION_MEMORY_MB[fn],
    systemLogLevel: FUNCTION_SYSTEM_LOG_LEVEL[fn],
  });
  const total = printCost(
    `What a delivered event costs: one event every ${INTERVAL_MS} ms, one endpoint`,
    [
      { name: "ingest (the call's own write: not in the total)", table: table.get('ingest'), outsideTotal: true },
      {
        name: 'fan-out',
        table: table.get('fan-out'),
        sqs: sqs.get('fan-out'),
        lambda: lambdaOf(fanoutTally, 'Fanout'),
        logs: logTallies.get('fan-out'),
      },
      {
        name: 'consumer',
        table: table.get('consumer'),
        sqs: sqs.get('consumer'),
        lambda: lambdaOf(consumerTally, 'Deliver'),
        logs: logTallies.get('consumer'),
      },
    ],
    s.n,
  );
  const seconds = wallMs / 1000;
  const traces =
    tracesFor(FUNCTION_TRACING.Fanout, fanoutTally.invocations, seconds) +
    tracesFor(FUNCTION_TRACING.Deliver, consumerTally.invocations, seconds);
  printAllIn('sparse', total, { traces, kmsRequests: 0, schedules: 0 }, s.n);
  const other = [...(table.get('') ?? new Map()), ...(sqs.get('') ?? new Map())]
    .map(([op, t]) => `${op} ${t.requests}`)
    .join(', ');
  console.log(
    `Outside these stages during the run (sweeper, owner emails' poller; not per delivery): ${other || 'none'}. Lambda's reads of the table's stream are free.`,
  );
  if (receiver.rejected > 0) throw new Error(`${receiver.rejected} deliveries failed verification`);
} finally {
  await receiver.close();
  await bench.close();
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
      'consumer first handed it → receipt verified (reads, admission, sign, POST; any deferral back through the queue)',
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

/** A string attribute, marshalled ({ S }) or not (declared as a function: the top-level run calls it before any const here exists). */
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

/** When the fan-out first wrote each event's delivery row, and every time the consumer wrote it, from the table client. */
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
) {
  const shop = await createShop(deps, { name: 'Floor Shop', owner_email: 'floor@bench.test' });
  // The pipeline's own SQS clients: the functions' (send) and the event source's (receive, delete), on a queue of the floor's.
  const queueUrl = (await stack.sqsApi.send(new CreateQueueCommand({ QueueName: 'bench-floor' }))).QueueUrl as string;
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
  return {
    streamReads: summarize(streamReads),
    total: summarize(steps.total ?? []),
    steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, summarize(v)])),
  };
}
