/**
 * Fan-out cost: one event to 16 endpoints, run through the real fan-out handler, with the
 * SQS and DynamoDB clients instrumented to count every request that reaches the service.
 *
 *   npm run bench:fanout
 */
import './lib/quiet';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { makeHandler } from '../functions/fanout';
import { ingestCall } from '../shared/domain/calls';
import { createShop } from '../shared/domain/shop';
import { createEndpoint, MAX_ENDPOINTS_PER_SHOP } from '../shared/domain/webhook-endpoints';
import { keys } from '../shared/store/keys';
import { countCalls, DYNAMODB_WRITES } from './lib/instrument';
import { startPipelineEnv } from './lib/pipeline-env';
import { printTable, verdict } from './lib/stats';

const env = await startPipelineEnv();
try {
  const deps = env.deps;
  const shop = await createShop(deps, { name: 'Fan-out Shop', owner_email: 'fanout@bench.test' });
  for (let i = 0; i < MAX_ENDPOINTS_PER_SHOP; i++) {
    await createEndpoint(deps, shop.id, { url: `http://127.0.0.1:9/hook-${i}`, events: ['call.completed'], description: null } as never);
  }
  const ingest = await ingestCall(deps, (await import('./lib/stack')).callIngest(shop.id, false));
  const eventId = ingest.event_ids[0] as string;
  // The stream record Lambda would receive for the event item: its full new image.
  const key = keys.event(shop.id, eventId);
  const item = await deps.db.client.send(new GetItemCommand({ TableName: deps.db.tableName, Key: { pk: { S: key.pk }, sk: { S: key.sk } } }));
  if (!item.Item) throw new Error('event item not found');
  const record: DynamoDBStreamEvent = {
    Records: [{ eventID: '1', eventName: 'INSERT', eventSource: 'aws:dynamodb', dynamodb: { NewImage: item.Item as never, SequenceNumber: '1', StreamViewType: 'NEW_IMAGE' } }],
  };

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
} finally {
  await env.close();
}
