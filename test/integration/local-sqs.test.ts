/**
 * The functions' SQS adapters (on the SDK's SQSClient) against the local stack's
 * SQS emulator (local-aws-sqs), read back with an SDK client.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { countCalls } from '../../bench/lib/instrument';
import { startLocalQueues, type LocalQueues } from '../../lib/local/sqs';
import { SqsNotificationQueue } from '../../shared/aws/sqs-notification-queue';
import { SqsDeliveryQueue, SqsQueueDelays } from '../../shared/delivery/aws/sqs-queue';

describe('SQS adapters on the local emulator', () => {
  let queues: LocalQueues;
  beforeAll(async () => {
    queues = await startLocalQueues({ visibilityTimeoutSeconds: 30 });
  });
  afterAll(() => queues.stop());

  async function receiveAll(queueUrl: string, waitSeconds = 0): Promise<Message[]> {
    const all: Message[] = [];
    for (let wait = waitSeconds; ; wait = 0) {
      const out = await queues.client.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: wait }),
      );
      const got = out.Messages ?? [];
      if (got.length === 0) return all;
      all.push(...got);
      await queues.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  }
  const message = (i: number) => ({
    shop_id: 'shop_1',
    event_id: `evt_${i}`,
    delivery_id: `dlv_${i}`,
    endpoint_id: 'we_1',
    attempt: 1,
  });

  it('delivery messages go out in batches and arrive whole; the batches are counted as the benchmarks count them', async () => {
    const counter = countCalls([queues.client, queues.api]);
    await new SqsDeliveryQueue(queues.api, queues.queueUrl).send(Array.from({ length: 12 }, (_, i) => message(i)));
    const bodies = (await receiveAll(queues.queueUrl)).map((m) => JSON.parse(m.Body ?? '') as { delivery_id: string });
    expect(bodies.map((b) => b.delivery_id).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `dlv_${i}`).sort());
    expect(counter.stages.get('')?.get('SendMessageBatch')).toMatchObject({ requests: 2, items: 12, units: 2 });
  });

  it('a delayed wake-up stays invisible for its delay', async () => {
    const now = Date.now();
    await new SqsQueueDelays(new SqsDeliveryQueue(queues.api, queues.queueUrl), () => now).schedule(
      message(99),
      new Date(now + 2_000),
    );
    expect(await receiveAll(queues.queueUrl)).toHaveLength(0);
    const later = await receiveAll(queues.queueUrl, 3);
    expect(later.map((m) => (JSON.parse(m.Body ?? '') as { delivery_id: string }).delivery_id)).toEqual(['dlv_99']);
    expect(Date.now() - now).toBeGreaterThanOrEqual(1_900);
  });

  it('owner-email messages go to their own queue', async () => {
    await new SqsNotificationQueue(queues.api, queues.notifyQueueUrl).send({ shop_id: 'shop_1', event_id: 'evt_7' });
    expect((await receiveAll(queues.notifyQueueUrl)).map((m) => JSON.parse(m.Body ?? ''))).toEqual([
      { shop_id: 'shop_1', event_id: 'evt_7' },
    ]);
  });

  it('a queue that does not exist is an error named as the SDK names it', async () => {
    const missing = `${new URL(queues.queueUrl).origin}/123456789012/no-such-queue`;
    await expect(
      new SqsNotificationQueue(queues.api, missing).send({ shop_id: 's', event_id: 'e' }),
    ).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
  });
});
