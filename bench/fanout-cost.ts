/**
 * Fan-out cost: one event to 16 endpoints, run through the real fan-out handler, with the
 * SQS and DynamoDB clients instrumented to count every request that reaches the service;
 * then the busy regime's fan-out (full stream batches of 100 events, each to 16 endpoints)
 * priced per delivery, all-in, for the closing cost line of `npm run bench`; then what a
 * payload filter costs (the same batches to 16 endpoints with a filter, events it takes and
 * events it leaves out, and one evaluation timed alone).
 *
 *   npm run bench:fanout            (BENCH_FANOUT_EVENTS=100: events per stream batch)
 */
import './lib/log-at-info';
import './lib/quiet';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { makeHandler } from '../functions/fanout';
import { ingestCall } from '../shared/domain/calls';
import { createShop } from '../shared/domain/shop';
import { createEndpoint, MAX_ENDPOINTS_PER_SHOP } from '../shared/domain/webhook-endpoints';
import { matchesFilter } from '../shared/domain/event-filter';
import { keys } from '../shared/store/keys';
import { countCalls, DYNAMODB_WRITES, newHandlerTally, timedHandler } from './lib/instrument';
import { startPipelineEnv } from './lib/pipeline-env';
import { printTable, setting, verdict } from './lib/stats';
import { printAllIn, printCost, tracesFor } from './lib/cost';
import { FUNCTION_MEMORY_MB, FUNCTION_SYSTEM_LOG_LEVEL, FUNCTION_TRACING } from './lib/lambda-memory';
import { LAMBDA_ARM64_PER_GB_SECOND } from './lib/prices';
import { countLogBytes, logTallies, resetLogBytes } from './lib/log-bytes';

/** What a CRM that wants only booked or emergency calls asks for (docs/api.md, "Filters"). */
const BOOKED_OR_EMERGENCY = { 'data.outcome': { $in: ['job_created', 'emergency_escalated'] } };

/** Lambda's stream event source hands the fan-out up to 100 records at a time (lib/constructs/delivery.ts). */
const BUSY_EVENTS = setting('BENCH_FANOUT_EVENTS', 100);

countLogBytes();
const env = await startPipelineEnv();
try {
  const deps = env.deps;
  const shop = await createShop(deps, { name: 'Fan-out Shop', owner_email: 'fanout@bench.test' });
  for (let i = 0; i < MAX_ENDPOINTS_PER_SHOP; i++) {
    await createEndpoint(deps, shop.id, {
      url: `http://127.0.0.1:9/hook-${i}`,
      events: ['call.completed'],
      description: null,
    } as never);
  }
  const { callIngest } = await import('./lib/stack');
  /** A stream batch as Lambda would hand it over: each new call's event item, its full new image (`booked`: calls that made a job). */
  const streamBatch = async (events: number, shopId = shop.id, booked = false): Promise<DynamoDBStreamEvent> => {
    const records: DynamoDBStreamEvent['Records'] = [];
    for (let i = 0; i < events; i++) {
      const eventId = (await ingestCall(deps, callIngest(shopId, booked))).event_ids[0] as string;
      const key = keys.event(shopId, eventId);
      const item = await deps.db.client.send(
        new GetItemCommand({ TableName: deps.db.tableName, Key: { pk: { S: key.pk }, sk: { S: key.sk } } }),
      );
      if (!item.Item) throw new Error('event item not found');
      const seq = String(records.length + 1);
      records.push({
        eventID: seq,
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: { NewImage: item.Item as never, SequenceNumber: seq, StreamViewType: 'NEW_IMAGE' },
      });
    }
    return { Records: records };
  };
  const record = await streamBatch(1);

  // The local wiring sends on the local queue's `api` client (its event sources on `client`): count both.
  const dynamoCounter = countCalls(deps.db.doc);
  const sqsCounter = countCalls([env.queues.client, env.queues.api]);
  const result = await makeHandler(() => env.deps)(record);
  if (result.batchItemFailures.length > 0) throw new Error('fan-out failed the record');

  const sqsCalls = [...sqsCounter.calls.values()].reduce((a, b) => a + b, 0);
  const messages = sqsCounter.items.get('SendMessageBatch') ?? 0;
  const writeOps = [...dynamoCounter.calls].filter(([op]) => DYNAMODB_WRITES.has(op));
  const writes = writeOps.reduce((n, [, c]) => n + c, 0);
  const itemsWritten = writeOps.reduce((n, [op]) => n + (dynamoCounter.items.get(op) ?? 0), 0);
  const reads = [...dynamoCounter.calls].filter(([op]) => !DYNAMODB_WRITES.has(op));
  const describe = (m: Map<string, number>, only: (op: string) => boolean) =>
    [...m]
      .filter(([op]) => only(op))
      .map(([op, n]) => `${op} ${n}`)
      .join(', ') || 'none';
  printTable(
    `Fan-out cost: one event to ${MAX_ENDPOINTS_PER_SHOP} endpoints (counted at the SDK clients)`,
    ['figure', 'count', 'detail', 'target', 'result'],
    [
      [
        'SQS requests',
        sqsCalls,
        `${describe(sqsCounter.calls, () => true)} (${messages} messages)`,
        '≤ 2',
        verdict(sqsCalls <= 2),
      ],
      [
        'DynamoDB write requests',
        writes,
        `${describe(dynamoCounter.calls, (op) => DYNAMODB_WRITES.has(op))} (${itemsWritten} items)`,
        '≤ 18',
        verdict(writes <= 18),
      ],
      [
        'DynamoDB read requests',
        reads.reduce((n, [, c]) => n + c, 0),
        describe(dynamoCounter.calls, (op) => !DYNAMODB_WRITES.has(op)),
        '',
        '',
      ],
    ],
  );

  // Busy: full stream batches, each event to every endpoint; counted per delivery, with its logs and Lambda time.
  const batch = await streamBatch(BUSY_EVENTS);
  const tally = newHandlerTally();
  const busyTable = countCalls(deps.db.doc);
  const busySqs = countCalls([env.queues.client, env.queues.api]);
  resetLogBytes();
  const started = performance.now();
  const busy = await timedHandler(
    'fan-out',
    makeHandler(() => env.deps),
    tally,
  )(batch);
  const seconds = (performance.now() - started) / 1000;
  if (busy.batchItemFailures.length > 0) throw new Error('fan-out failed records of the busy batch');
  const deliveries = BUSY_EVENTS * MAX_ENDPOINTS_PER_SHOP;
  const fanout = printCost(
    `Fan-out, busy: batches of ${BUSY_EVENTS} events, each to ${MAX_ENDPOINTS_PER_SHOP} endpoints, per delivery`,
    [
      {
        name: 'fan-out',
        table: busyTable.stages.get('fan-out'),
        sqs: busySqs.stages.get('fan-out'),
        lambda: { tally, memoryMb: FUNCTION_MEMORY_MB.Fanout, systemLogLevel: FUNCTION_SYSTEM_LOG_LEVEL.Fanout },
        logs: logTallies.get('fan-out'),
      },
    ],
    deliveries,
  );
  printAllIn(
    'busy fan-out',
    fanout,
    { traces: tracesFor(FUNCTION_TRACING.Fanout, tally.invocations, seconds), kmsRequests: 0, schedules: 0 },
    deliveries,
  );

  // Payload filters: evaluated in the fan-out for each endpoint an event's type reaches; an event a filter leaves out makes no row and no message.
  const filteredShop = await createShop(deps, { name: 'Filtered Shop', owner_email: 'filters@bench.test' });
  for (let i = 0; i < MAX_ENDPOINTS_PER_SHOP; i++) {
    await createEndpoint(deps, filteredShop.id, {
      url: `http://127.0.0.1:9/filtered-${i}`,
      events: ['call.completed'],
      filter: BOOKED_OR_EMERGENCY,
      description: null,
    } as never);
  }
  const fanOutOf = async (label: string, events: DynamoDBStreamEvent) => {
    const table = countCalls(deps.db.doc);
    const sqs = countCalls([env.queues.client, env.queues.api]);
    const t = process.cpuUsage();
    const out = await makeHandler(() => env.deps)(events);
    const cpu = process.cpuUsage(t);
    if (out.batchItemFailures.length > 0) throw new Error(`fan-out failed records (${label})`);
    const writes = [...table.calls]
      .filter(([op]) => DYNAMODB_WRITES.has(op))
      .reduce((n, [op]) => n + (table.items.get(op) ?? 0), 0);
    const perEvent = (cpu.user + cpu.system) / 1000 / events.Records.length;
    return [label, writes, sqs.items.get('SendMessageBatch') ?? 0, perEvent.toFixed(2)];
  };
  const rows = [
    await fanOutOf('no filter', await streamBatch(BUSY_EVENTS)),
    await fanOutOf('a filter every event matches', await streamBatch(BUSY_EVENTS, filteredShop.id, true)),
    await fanOutOf('a filter no event matches', await streamBatch(BUSY_EVENTS, filteredShop.id, false)),
  ];
  // One evaluation alone, on the event as the fan-out sees it (compiled once, as per stream batch).
  const sample = (await deps.events.list(filteredShop.id, { limit: 1 })).items[0];
  if (!sample) throw new Error('no event of the filtered shop');
  const runs = 20_000;
  matchesFilter(BOOKED_OR_EMERGENCY, sample);
  const t0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) matchesFilter(BOOKED_OR_EMERGENCY, sample);
  const t1 = process.cpuUsage(t0);
  const evaluationUs = (t1.user + t1.system) / runs;
  printTable(
    `Payload filters: a stream batch of ${BUSY_EVENTS} call.completed events to ${MAX_ENDPOINTS_PER_SHOP} endpoints, with and without a filter (${JSON.stringify(BOOKED_OR_EMERGENCY)})`,
    ["endpoints' filter", 'items written', 'messages sent', 'fan-out CPU ms per event'],
    rows,
  );
  const perMillion = (evaluationUs / 1e6) * (FUNCTION_MEMORY_MB.Fanout / 1024) * LAMBDA_ARM64_PER_GB_SECOND * 1e6;
  console.log(
    `One filter evaluation: ${evaluationUs.toFixed(2)} µs of CPU (mean of ${runs}), one per endpoint the event's type reaches: $${perMillion.toPrecision(2)} of fan-out Lambda time per million at ${FUNCTION_MEMORY_MB.Fanout} MB. An event a filter leaves out costs that and nothing else: no table write, no message.`,
  );
} finally {
  await env.close();
}
