/**
 * Fan-out cost: one event to 16 endpoints, run through the real fan-out handler, with the
 * SQS and DynamoDB clients instrumented to count every request that reaches the service;
 * then the busy regime's fan-out (full stream batches of 100 events, each to 16 endpoints)
 * priced per delivery, all-in, for the closing cost line of `npm run bench`.
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
import * as keys from '../shared/store/item-keys';
import { countCalls, DYNAMODB_WRITES, newHandlerTally, timedHandler } from './lib/instrument';
import { startPipelineEnv } from './lib/pipeline-env';
import { printTable, setting, verdict } from './lib/stats';
import { printAllIn, printCost, tracesFor } from './lib/cost';
import { FUNCTION_MEMORY_MB, FUNCTION_SYSTEM_LOG_LEVEL, FUNCTION_TRACING } from './lib/lambda-memory';
import { countLogBytes, logTallies, resetLogBytes } from './lib/log-bytes';

/** Lambda's stream event source hands the fan-out up to 100 records at a time (lib/constructs/delivery.ts). */
const BUSY_EVENTS = setting('BENCH_FANOUT_EVENTS', 100);

countLogBytes();
const env = await startPipelineEnv();
try {
  const deps = env.deps;
  const shop = await createShop(deps, { name: 'Fan-out Shop', owner_email: 'fanout@bench.test' });
  for (let i = 0; i < MAX_ENDPOINTS_PER_SHOP; i++) {
    await createEndpoint(deps, shop.id, { url: `http://127.0.0.1:9/hook-${i}`, events: ['call.completed'], description: null } as never);
  }
  const { callIngest } = await import('./lib/stack');
  /** A stream batch as Lambda would hand it over: each new call's event item, its full new image. */
  const streamBatch = async (events: number): Promise<DynamoDBStreamEvent> => {
    const records: DynamoDBStreamEvent['Records'] = [];
    for (let i = 0; i < events; i++) {
      const eventId = (await ingestCall(deps, callIngest(shop.id, false))).event_ids[0] as string;
      const key = keys.event(shop.id, eventId);
      const item = await deps.db.client.send(new GetItemCommand({ TableName: deps.db.tableName, Key: { pk: { S: key.pk }, sk: { S: key.sk } } }));
      if (!item.Item) throw new Error('event item not found');
      const seq = String(records.length + 1);
      records.push({ eventID: seq, eventName: 'INSERT', eventSource: 'aws:dynamodb', dynamodb: { NewImage: item.Item as never, SequenceNumber: seq, StreamViewType: 'NEW_IMAGE' } });
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
    [...m].filter(([op]) => only(op)).map(([op, n]) => `${op} ${n}`).join(', ') || 'none';
  printTable(`Fan-out cost: one event to ${MAX_ENDPOINTS_PER_SHOP} endpoints (counted at the SDK clients)`, ['figure', 'count', 'detail', 'target', 'result'], [
    ['SQS requests', sqsCalls, `${describe(sqsCounter.calls, () => true)} (${messages} messages)`, '≤ 2', verdict(sqsCalls <= 2)],
    ['DynamoDB write requests', writes, `${describe(dynamoCounter.calls, (op) => DYNAMODB_WRITES.has(op))} (${itemsWritten} items)`, '≤ 18', verdict(writes <= 18)],
    ['DynamoDB read requests', reads.reduce((n, [, c]) => n + c, 0), describe(dynamoCounter.calls, (op) => !DYNAMODB_WRITES.has(op)), '', ''],
  ]);

  // Busy: full stream batches, each event to every endpoint; counted per delivery, with its logs and Lambda time.
  const batch = await streamBatch(BUSY_EVENTS);
  const tally = newHandlerTally();
  const busyTable = countCalls(deps.db.doc);
  const busySqs = countCalls([env.queues.client, env.queues.api]);
  resetLogBytes();
  const started = performance.now();
  const busy = await timedHandler('fan-out', makeHandler(() => env.deps), tally)(batch);
  const seconds = (performance.now() - started) / 1000;
  if (busy.batchItemFailures.length > 0) throw new Error('fan-out failed records of the busy batch');
  const deliveries = BUSY_EVENTS * MAX_ENDPOINTS_PER_SHOP;
  const fanout = printCost(`Fan-out, busy: batches of ${BUSY_EVENTS} events, each to ${MAX_ENDPOINTS_PER_SHOP} endpoints, per delivery`, [
    {
      name: 'fan-out',
      table: busyTable.stages.get('fan-out'),
      sqs: busySqs.stages.get('fan-out'),
      lambda: { tally, memoryMb: FUNCTION_MEMORY_MB.Fanout, systemLogLevel: FUNCTION_SYSTEM_LOG_LEVEL.Fanout },
      logs: logTallies.get('fan-out'),
    },
  ], deliveries);
  printAllIn('busy fan-out', fanout, { traces: tracesFor(FUNCTION_TRACING.Fanout, tally.invocations, seconds), kmsRequests: 0, schedules: 0 }, deliveries);
} finally {
  await env.close();
}
