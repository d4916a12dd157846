/**
 * The local stand-in for Lambda's SQS event source (lib/local/queue-poller.ts) on the local
 * SQS emulator: no more batches run than the concurrency allows; what the handler settles is
 * deleted, what it reports failed is not; records carry what Lambda's do; stop() ends an idle
 * long poll at once.
 */
import { createHash } from 'node:crypto';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { countCalls } from '../../bench/lib/instrument';
import { startQueuePoller } from '../../lib/local/queue-poller';
import { localSqsClient, startLocalQueues, type LocalQueues } from '../../lib/local/sqs';

describe('local SQS event source', () => {
  let queues: LocalQueues;
  beforeAll(async () => {
    queues = await startLocalQueues({ visibilityTimeoutSeconds: 1 });
  });
  afterAll(() => queues.stop());

  const send = async (bodies: string[], queueUrl = queues.queueUrl) => {
    for (let i = 0; i < bodies.length; i += 10) {
      const entries = bodies.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body }));
      await queues.client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    }
  };
  /** An SQS client that keeps every request it is asked to send (operation and input). */
  const recordingApi = (on: LocalQueues = queues) => {
    const sqs = localSqsClient(on.endpoint);
    const requests: { operation: string; input: unknown }[] = [];
    sqs.middlewareStack.add(
      (next, context) => (args) => {
        requests.push({ operation: (context.commandName ?? '').replace(/Command$/, ''), input: args.input });
        return next(args);
      },
      { step: 'initialize', name: 'recordRequests' },
    );
    return { sqs, requests };
  };
  const until = async (done: () => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  };

  it('runs at most `concurrency` batches at once, and deletes what each batch settled', async () => {
    const bodies = Array.from({ length: 60 }, (_, i) => `m${i}`);
    const seen: string[] = [];
    let running = 0;
    let most = 0;
    const handler = async (event: SQSEvent) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 30));
      seen.push(...event.Records.map((r) => r.body));
      running--;
      // m7 fails: it stays on the queue.
      return {
        batchItemFailures: event.Records.filter((r) => r.body === 'm7').map((r) => ({ itemIdentifier: r.messageId })),
      };
    };
    await send(bodies);
    const poller = startQueuePoller({
      sqs: queues.events,
      queueUrl: queues.queueUrl,
      queueArn: queues.queueArn,
      handler,
      concurrency: 2,
    });
    try {
      // Every message once (m7 may already be back a second time on a slow machine: its
      // visibility timeout is 1 s, so count distinct bodies, not handler calls).
      await until(() => new Set(seen).size >= bodies.length);
    } finally {
      await poller.stop();
    }
    expect(most).toBeLessThanOrEqual(2);
    expect([...new Set(seen)].sort()).toEqual([...bodies].sort());
    // Settled messages are gone; the failed one comes back once its visibility timeout (1 s) is over.
    await until(() => false, 1_200);
    const back = await queues.client.send(
      new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    // (local-aws-sqs may hand the failed message back twice: at-least-once, as SQS allows.)
    expect([...new Set((back.Messages ?? []).map((m) => m.Body))]).toEqual(['m7']);
  });

  it("hands the handler records as Lambda's event source does, and counts its requests under the SDK's operation names", async () => {
    // The other queue (the deliveries' still holds the last test's m7), empty.
    const counter = countCalls(queues.events);
    const records: SQSRecord[] = [];
    const sentAt = Date.now();
    await send(['{"delivery_id":"dlv_1"}'], queues.notifyQueueUrl);
    const poller = startQueuePoller({
      sqs: queues.events,
      queueUrl: queues.notifyQueueUrl,
      queueArn: queues.notifyQueueArn,
      handler: (event) => {
        records.push(...event.Records);
        return Promise.resolve({ batchItemFailures: [] });
      },
    });
    try {
      await until(() => records.length > 0);
      // Deleted once settled: its receive count stays 1 (it would come back after the 1 s visibility timeout).
      await until(() => counter.calls.get('DeleteMessageBatch') === 1);
    } finally {
      await poller.stop();
    }
    expect(records).toHaveLength(1);
    const [r] = records as [SQSRecord];
    expect(r).toMatchObject({
      body: '{"delivery_id":"dlv_1"}',
      md5OfBody: createHash('md5').update('{"delivery_id":"dlv_1"}').digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: queues.notifyQueueArn,
      awsRegion: 'us-east-1',
      messageAttributes: {},
    });
    expect(r.messageId).toMatch(/\S/);
    expect(r.receiptHandle).toMatch(/\S/);
    expect(r.attributes.ApproximateReceiveCount).toBe('1');
    expect(Math.abs(Number(r.attributes.SentTimestamp) - sentAt)).toBeLessThan(5_000);
    expect(Number(r.attributes.ApproximateFirstReceiveTimestamp)).toBeGreaterThanOrEqual(
      Number(r.attributes.SentTimestamp),
    );
    expect([...counter.calls.keys()].sort()).toEqual(['DeleteMessageBatch', 'GetQueueAttributes', 'ReceiveMessage']);
    await until(() => false, 1_200);
    const back = await queues.client.send(
      new ReceiveMessageCommand({ QueueUrl: queues.notifyQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    expect(back.Messages ?? []).toHaveLength(0);
  });

  it(
    'an idle queue is long-polled for 1 s at a time by five receives at once, as ' +
      "Lambda's event source does, reading its count only before the first; stop() ends " +
      'them at once, and a cut-off poll takes nothing sent after its wait',
    async () => {
      const { sqs, requests } = recordingApi();
      const poller = startQueuePoller({
        sqs,
        queueUrl: queues.notifyQueueUrl,
        queueArn: queues.notifyQueueArn,
        handler: () => Promise.resolve({ batchItemFailures: [] }),
      });
      const receives = () => requests.filter((r) => r.operation === 'ReceiveMessage');
      try {
        // Two rounds: the second follows an empty long poll, so nothing waited and the count is not read again.
        await until(() => receives().length === 10, 5_000);
        await until(() => false, 100);
        const started = Date.now();
        await poller.stop();
        expect(Date.now() - started).toBeLessThan(500);
      } finally {
        sqs.destroy();
      }
      expect(receives()).toHaveLength(10);
      expect(requests.filter((r) => r.operation === 'GetQueueAttributes')).toHaveLength(5);
      for (const r of receives()) expect(r).toMatchObject({ input: { WaitTimeSeconds: 1, MaxNumberOfMessages: 1 } });
      // local-aws-sqs runs the cut-off receive to its end: a message sent after it is received once,
      // by the next reader.
      await until(() => false, 1_300);
      await send(['after-stop'], queues.notifyQueueUrl);
      const got = await queues.client.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.notifyQueueUrl,
          MaxNumberOfMessages: 1,
          WaitTimeSeconds: 1,
          AttributeNames: ['All'],
        }),
      );
      expect(got.Messages?.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([['after-stop', '1']]);
      await queues.client.send(
        new DeleteMessageCommand({ QueueUrl: queues.notifyQueueUrl, ReceiptHandle: got.Messages?.[0]?.ReceiptHandle }),
      );
    },
  );

  it('a batch in flight is not counted as waiting: the poller long-polls for the next message and asks for it alone', async () => {
    // local-aws-sqs counts messages in flight in ApproximateNumberOfMessages. Counted as waiting, a held
    // batch made the poller ask for more than was there, and each such receive waited out 40 ms.
    // Queues of its own whose messages stay hidden for 30 s: the held one must not come back during the test.
    const own = await startLocalQueues({ visibilityTimeoutSeconds: 30 });
    const { sqs, requests } = recordingApi(own);
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const bodies: string[] = [];
    const poller = startQueuePoller({
      sqs,
      queueUrl: own.notifyQueueUrl,
      queueArn: own.notifyQueueArn,
      handler: async (event) => {
        bodies.push(...event.Records.map((r) => r.body));
        if (event.Records.some((r) => r.body === 'held')) await held;
        return { batchItemFailures: [] };
      },
    });
    const receives = () => requests.filter((r) => r.operation === 'ReceiveMessage');
    try {
      const sendOwn = (body: string) =>
        own.client.send(
          new SendMessageBatchCommand({ QueueUrl: own.notifyQueueUrl, Entries: [{ Id: '0', MessageBody: body }] }),
        );
      await sendOwn('held');
      await until(() => bodies.includes('held'));
      const before = receives().length;
      await until(() => false, 300);
      // Long polls (the one that took 'held' polls again; two each on a stalled machine) while 'held' is in flight: the old count made 7 receives per poll here, one every 40 ms.
      expect(receives().length - before).toBeLessThanOrEqual(2 * 5);
      expect(receives().at(-1)?.input).toMatchObject({ WaitTimeSeconds: 1, MaxNumberOfMessages: 1 });
      await sendOwn('next');
      await until(() => bodies.includes('next'));
      expect(receives().every((r) => (r.input as { MaxNumberOfMessages: number }).MaxNumberOfMessages === 1)).toBe(
        true,
      );
    } finally {
      release();
      await poller.stop();
      sqs.destroy();
      await own.stop();
    }
    expect(bodies).toEqual(['held', 'next']);
  });
});
