import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { countCalls, stage } from '../../bench/lib/instrument';
import { startLocalQueues, type LocalQueues } from '../../lib/local/sqs';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

describe('benchmark request counter (bench/lib/instrument.ts)', () => {
  let deps: ApiDeps;
  let queues: LocalQueues;
  beforeAll(async () => {
    deps = await useFreshTable();
    queues = await startLocalQueues({ visibilityTimeoutSeconds: 30 });
  });
  afterAll(async () => {
    await queues.stop();
  });

  it('files table requests by stage with the capacity DynamoDB Local reports, and changes no result', async () => {
    const { doc, tableName } = deps.db;
    const counter = countCalls(doc);
    await stage.run('fan-out', () =>
      doc.put({ TableName: tableName, Item: { pk: 'BENCH#1', sk: 'A', note: 'x'.repeat(1500) } }),
    );
    const got = await stage.run('consumer', () =>
      doc.get({ TableName: tableName, Key: { pk: 'BENCH#1', sk: 'A' }, ConsistentRead: true }),
    );
    expect(got.Item?.note).toHaveLength(1500);
    await doc.transactWrite({
      TransactItems: [
        { Put: { TableName: tableName, Item: { pk: 'BENCH#2', sk: 'A' } } },
        { Put: { TableName: tableName, Item: { pk: 'BENCH#3', sk: 'A' } } },
      ],
    });
    expect(counter.stages.get('fan-out')?.get('PutItem')).toEqual({ requests: 1, items: 1, units: 2, estimated: 0 });
    expect(counter.stages.get('consumer')?.get('GetItem')).toEqual({ requests: 1, items: 1, units: 1, estimated: 0 });
    // Two items in a transaction: two units each.
    expect(counter.stages.get('')?.get('TransactWriteItems')).toEqual({
      requests: 1,
      items: 2,
      units: 4,
      estimated: 0,
    });
    expect(counter.calls.get('PutItem')).toBe(1);
  });

  it('estimates what a failed request bills, and still throws its error', async () => {
    const { doc, tableName } = deps.db;
    const counter = countCalls(doc);
    const failing = doc.update({
      TableName: tableName,
      Key: { pk: 'BENCH#none', sk: 'A' },
      UpdateExpression: 'SET n = :n',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':n': 1 },
    });
    await expect(failing).rejects.toThrow(/conditional/i);
    expect(counter.stages.get('')?.get('UpdateItem')).toEqual({ requests: 1, items: 1, units: 1, estimated: 1 });
  });

  it('bills SQS requests per 64 KB chunk, and files requests outside any stage where stageOf says', async () => {
    const counter = countCalls(queues.client, {
      stageOf: (op) => (op === 'GetQueueAttributes' ? 'poller' : undefined),
    });
    const body = 'y'.repeat(40 * 1024);
    await queues.client.send(
      new SendMessageBatchCommand({
        QueueUrl: queues.queueUrl,
        Entries: [
          { Id: '1', MessageBody: body },
          { Id: '2', MessageBody: body },
        ],
      }),
    );
    await queues.client.send(
      new GetQueueAttributesCommand({ QueueUrl: queues.queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    const received = await queues.client.send(
      new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const n = received.Messages?.length ?? 0;
    expect(n).toBeGreaterThan(0);
    expect(counter.stages.get('')?.get('SendMessageBatch')).toMatchObject({ requests: 1, items: 2, units: 2 });
    expect(counter.stages.get('')?.get('ReceiveMessage')).toMatchObject({
      requests: 1,
      units: Math.ceil((n * 40) / 64),
    });
    expect(counter.stages.get('poller')?.get('GetQueueAttributes')).toMatchObject({ requests: 1, units: 1 });
  });
});
