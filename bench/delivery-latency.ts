/**
 * Delivery latency: event item written → signed request received and verified, on the
 * local stack (DynamoDB Local, its stream, the local queue, the real handlers), beside the
 * floor measured in the same run: the store and network steps one delivery cannot avoid,
 * timed back to back with no polling waits.
 *
 *   npm run bench:latency            (BENCH_EVENTS=500, BENCH_INTERVAL_MS=40, BENCH_FLOOR_SAMPLES=200)
 *
 * The pace (25 events/s) stays under what one DynamoDB Local sustains for the whole
 * pipeline on a 2-core machine (about 40 events/s: every event costs it ~8 table requests
 * and its stream reads); above that the figure measures a queue, not a delivery.
 */
import './lib/quiet';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ingestCall } from '../shared/domain/calls';
import { createShop } from '../shared/domain/shop';
import { newEvent } from '../shared/domain/events';
import { newDelivery } from '../shared/domain/deliveries';
import { newId } from '../shared/ids';
import type { LocalDeps } from '../lib/local/wiring';
import { DynamoDeliveryStore } from '../shared/store/deliveries';
import { signedHeaders } from '../shared/webhooks/signer';
import { httpSender } from '../shared/webhooks/sender';
import { callIngest, startBenchStack } from './lib/stack';
import { countCalls } from './lib/instrument';
import { startReceiver } from './lib/receiver';
import { ms, printTable, ratio, setting, sleep, summarize, verdict } from './lib/stats';

const EVENTS = setting('BENCH_EVENTS', 500);
const INTERVAL_MS = setting('BENCH_INTERVAL_MS', 40);
const FLOOR_SAMPLES = setting('BENCH_FLOOR_SAMPLES', 200);
const WARMUP = 30;

const bench = await startBenchStack();
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
  receiver.onVerified = (eventId, at) => {
    const t0 = writtenAt.get(eventId);
    if (t0 !== undefined && expect.delete(eventId)) latencies.push(at - t0);
  };

  /** Ingests one call (its transaction writes the call.completed event); t0 is when that write is issued. */
  const emit = async () => {
    let t0 = 0;
    const calls = { ...deps.calls, record: (batch: Parameters<typeof deps.calls.record>[0]) => ((t0 = performance.now()), deps.calls.record(batch)) };
    const result = await ingestCall({ calls, shops: deps.shops, now: deps.now }, callIngest(bench.demo.shop.id, false));
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
  const requests = countCalls(deps.db.client);
  const stages = watchStages(deps.db.client);
  const started = performance.now();
  const writes: Promise<void>[] = [];
  for (let i = 0; i < EVENTS; i++) {
    writes.push(emit());
    const next = started + (i + 1) * INTERVAL_MS;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(writes);
  await drain(60_000);
  const perEvent = [...requests.calls].map(([op, n]) => `${op} ${(n / EVENTS).toFixed(1)}`).join(', ');

  const s = summarize(latencies);
  const f = floor.total.p50;
  printTable(`Delivery latency: event written → verified receipt (${s.n} events, one every ${INTERVAL_MS} ms)`, ['figure', 'ms', 'vs floor', 'target', 'result'], [
    ['floor p50 (steps below, back to back)', ms(f), '1.00×', '', ''],
    ['delivery p50', ms(s.p50), ratio(s.p50, f), '≤ 3×', verdict(s.p50 <= 3 * f)],
    ['delivery p99', ms(s.p99), ratio(s.p99, f), '≤ 10×', verdict(s.p99 <= 10 * f)],
    ['delivery max', ms(s.max), ratio(s.max, f), '', ''],
  ]);
  console.log(`\nTable requests per event, ingest to delivery: ${perEvent}`);
  const stageRows = [...writtenAt].filter(([id]) => stages.rowWritten.has(id) && stages.attemptRecorded.has(id));
  const offsets = (from: (id: string, t0: number) => number, to: (id: string, t0: number) => number) => summarize(stageRows.map(([id, t0]) => to(id, t0) - from(id, t0)));
  const w = (_id: string, t0: number) => t0;
  const r = (id: string) => stages.rowWritten.get(id) as number;
  const a = (id: string) => stages.attemptRecorded.get(id) as number;
  printTable('Where the time goes (p50 / p99 of each stage, ms)', ['stage', 'p50', 'p99'], [
    ['write issued → delivery row written (stream read + fan-out)', ...pair(offsets(w, r))],
    ['delivery row written → attempt recorded (queue + consumer + POST)', ...pair(offsets(r, a))],
  ]);
  console.log(`Stream reads until the record showed: p50 ${floor.streamReads.p50}, max ${floor.streamReads.max}`);
  printTable(`Floor steps (${FLOOR_SAMPLES} samples each)`, ['step', 'p50 ms', 'p99 ms'], Object.entries(floor.steps).map(([name, x]) => [name, ms(x.p50, 2), ms(x.p99, 2)]));
  if (receiver.rejected > 0) throw new Error(`${receiver.rejected} deliveries failed verification`);
} finally {
  await receiver.close();
  await bench.close();
}

function pair(x: { p50: number; p99: number }): [string, string] {
  return [ms(x.p50), ms(x.p99)];
}

/** When each event's delivery row was first written (fan-out) and its attempt recorded (consumer), from the table client. */
function watchStages(client: LocalDeps['db']['client']) {
  const rowWritten = new Map<string, number>();
  const attemptRecorded = new Map<string, number>();
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? undefined));
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const input = args.input as { Item?: Record<string, unknown>; Key?: Record<string, unknown> };
      if (context.commandName === 'PutItemCommand' && text(input.Item?.entity) === 'delivery') {
        const id = text(input.Item?.event_id);
        if (id && !rowWritten.has(id)) rowWritten.set(id, performance.now());
      }
      const sk = text(input.Key?.sk);
      if (context.commandName === 'UpdateItemCommand' && sk?.startsWith('DLV#')) {
        const id = sk.split('#')[1];
        if (id && !attemptRecorded.has(id)) attemptRecorded.set(id, performance.now());
      }
      return out;
    },
    { step: 'initialize', name: 'benchStages' },
  );
  return { rowWritten, attemptRecorded };
}

/**
 * The unavoidable steps of one delivery, each done once, back to back: the ingest
 * transaction (to a shop with no endpoints, so the pipeline stays idle), one stream read
 * that returns it, a queue send, receive and delete, the delivery row's create and its
 * attempt update, and one signed POST over a kept-alive connection.
 */
async function measureFloor(stack: Awaited<ReturnType<typeof startBenchStack>>['stack'], url: string, secret: string, deps: LocalDeps) {
  const shop = await createShop(deps, { name: 'Floor Shop', owner_email: 'floor@bench.test' });
  const sqs = new SQSClient({ endpoint: stack.queue.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-floor' }))).QueueUrl as string;
  const streams = new DynamoDBStreamsClient({ endpoint: stack.dynamodbEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const ddb = deps.db.client;
  const streamArn = (await ddb.send(new DescribeTableCommand({ TableName: stack.tableName }))).Table?.LatestStreamArn as string;
  const shards = (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
  const open = shards.find((sh) => !sh.SequenceNumberRange?.EndingSequenceNumber) ?? shards[shards.length - 1];
  let iterator = (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: open?.ShardId, ShardIteratorType: 'LATEST' }))).ShardIterator;
  const deliveries = new DynamoDeliveryStore(deps.db);
  const streamReads: number[] = [];
  const sender = httpSender(deps.policy, 10_000);
  const steps: Record<string, number[]> = { 'ingest transaction (call + event)': [], 'stream read (GetRecords until it returns the record)': [], 'queue send + receive + delete': [], 'delivery row create + update': [], 'signed keep-alive POST': [], total: [] };
  const timed = async <T>(name: string, task: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await task();
    steps[name]?.push(performance.now() - t);
    return out;
  };
  for (let i = 0; i < FLOOR_SAMPLES; i++) {
    const calls = { ...deps.calls, record: (batch: Parameters<typeof deps.calls.record>[0]) => timed('ingest transaction (call + event)', () => deps.calls.record(batch)) };
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
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ i }) }));
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }));
      const handle = got.Messages?.[0]?.ReceiptHandle;
      if (handle) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: handle }));
    });
    const now = new Date();
    const event = { ...newEvent(shop.id, 'call.completed', {}, now), id: event_ids[0] as string };
    const row = newDelivery(event, 'we_floor', newId('dlv', now.getTime()), 'fanout', now);
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
  sqs.destroy();
  const names = Object.keys(steps).filter((k) => k !== 'total');
  for (let i = 0; i < FLOOR_SAMPLES; i++) steps.total?.push(names.reduce((sum, k) => sum + (steps[k]?.[i] ?? 0), 0));
  return { streamReads: summarize(streamReads), total: summarize(steps.total ?? []), steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, summarize(v)])) };
}
