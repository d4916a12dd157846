/**
 * The local stand-in for Lambda's SQS event source (lib/local/queue-poller.ts) on the local
 * SQS emulator: no more batches run than the concurrency allows; what the handler settles is
 * deleted, what it reports failed is not.
 */
import { ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startQueuePoller } from '../../lib/local/queue-poller';
import { startLocalQueues, type LocalQueues } from '../../lib/local/sqs';

describe('local SQS event source', () => {
  let queues: LocalQueues;
  beforeAll(async () => {
    queues = await startLocalQueues({ visibilityTimeoutSeconds: 1 });
  });
  afterAll(() => queues.stop());

  const send = async (bodies: string[]) => {
    for (let i = 0; i < bodies.length; i += 10) {
      const entries = bodies.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body }));
      await queues.client.send(new SendMessageBatchCommand({ QueueUrl: queues.queueUrl, Entries: entries }));
    }
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
      return { batchItemFailures: event.Records.filter((r) => r.body === 'm7').map((r) => ({ itemIdentifier: r.messageId })) };
    };
    await send(bodies);
    const poller = startQueuePoller({ sqs: queues.client, queueUrl: queues.queueUrl, queueArn: queues.queueArn, handler, concurrency: 2 });
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
    const back = await queues.client.send(new ReceiveMessageCommand({ QueueUrl: queues.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    // (local-aws-sqs may hand the failed message back twice: at-least-once, as SQS allows.)
    expect([...new Set((back.Messages ?? []).map((m) => m.Body))]).toEqual(['m7']);
  });
});
