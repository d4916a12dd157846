import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import { startQueuePoller } from '../../lib/local/queue-poller';
import { localHandlers } from '../../lib/local/wiring';
import { ingestCall } from '../../shared/domain/calls';
import { simulatedCall } from '../../lib/cli/simulate';
import type { DeliveryRecord } from '../../shared/delivery/records';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { keys } from '../../shared/store/keys';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { GENEROUS_RATE_LIMITS, startTestStack } from '../helpers/stack';

/**
 * A fan-out row on its fast path is in no index: its queue message is its only wake-up. What
 * finds it when that message is lost: the delivery dead-letter queue, which the sweeper drains,
 * and, on the local stack, whose queue dies with the process, the scan of the table at start.
 */
describe('what finds a fast-path row whose message is lost (local stack, DynamoDB Local)', () => {
  const stacks: LocalStack[] = [];
  afterEach(async () => {
    await closeReceivers();
    await Promise.all(stacks.splice(0).map((s) => s.stop()));
  });

  /** A stack without a consumer (messages stay on its queue), an endpoint, and one call's event fanned out to it. */
  async function fannedOut() {
    const stack = await startTestStack({ consumer: false });
    stacks.push(stack);
    let secret = '';
    const receiver = await startReceiver(() => [secret]);
    const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', {
      key: stack.demo.writeKey.key,
      body: { url: receiver.url, events: ['call.completed'] },
    });
    secret = created.json.secret as string;
    const [eventId] = (
      await ingestCall(
        stack.deps,
        simulatedCall(stack.demo.shop, { withJob: false, emergency: false, endedAt: new Date() }),
      )
    ).event_ids;
    const deliveries = new DynamoDeliveryStore(stack.deps.db);
    let row: DeliveryRecord | undefined;
    await until(
      async () => (row = (await deliveries.listForEvent(stack.demo.shop.id, eventId as string))[0]) !== undefined,
      'the fan-out row',
    );
    const { shop_id, endpoint_id, id } = row as DeliveryRecord;
    const item =
      (
        await stack.deps.db.doc.get({
          TableName: stack.deps.db.tableName,
          Key: keys.delivery(shop_id, endpoint_id, id),
          ConsistentRead: true,
        })
      ).Item ?? {};
    // On its fast path: no entry in the endpoint's open deliveries (gsi1) or the due index (gsi2).
    expect(Object.keys(item).filter((k) => /^gsi[12]/.test(k))).toEqual([]);
    expect(row).toMatchObject({ status: 'pending', sweep_at: null });
    return { stack, receiver, row: row as DeliveryRecord, deliveries };
  }

  it("the sweeper takes a dead-lettered message's row into the due index and the delivery goes out", async () => {
    const { stack, receiver, row, deliveries } = await fannedOut();
    // As SQS does after the consumer failed on it five times: the message leaves the queue for its dead-letter queue.
    const taken = await stack.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack.queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(
      (taken.Messages ?? []).map((m) => (JSON.parse(m.Body ?? '{}') as { delivery_id?: string }).delivery_id),
    ).toEqual([row.id]);
    await stack.sqs.send(
      new DeleteMessageCommand({ QueueUrl: stack.queue.url, ReceiptHandle: taken.Messages?.[0]?.ReceiptHandle }),
    );
    await stack.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.queue.dlqUrl, MessageBody: taken.Messages?.[0]?.Body }),
    );

    const handlers = localHandlers(stack.deps);
    const report = (await handlers.sweep({})) as { deadLettered: number; enqueued: number };
    expect(report.deadLettered).toBe(1);
    expect((await deliveries.get(row))?.sweep_at).not.toBeNull();
    // Due at once: this sweep sends it, or the next (the index is eventually consistent).
    if (report.enqueued === 0) await handlers.sweep({});
    const left = await stack.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack.queue.dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    expect(left.Messages ?? []).toEqual([]);

    const poller = startQueuePoller({
      sqs: stack.sqs,
      queueUrl: stack.queue.url,
      queueArn: stack.queue.arn,
      handler: handlers.deliver,
    });
    try {
      await waitFor(
        () => receiver.received.find((r) => r.event.id === row.event_id),
        20_000,
        'the dead-lettered delivery at its receiver',
      );
      await until(async () => (await deliveries.get(row))?.status === 'succeeded', 'the row recorded');
    } finally {
      await poller.stop();
    }
  }, 60_000);

  it('a restart on the same table re-queues an open fast-path row whose message died with the last run', async () => {
    const { stack, receiver, row, deliveries } = await fannedOut();
    // The queue (and the message on it) is in memory: gone with the stack.
    await stack.stop();
    const again = await startLocalStack({
      port: 0,
      dynamodbEndpoint: stack.dynamodbEndpoint,
      tableName: stack.tableName,
      secretsKeyFile: process.env.SECRETS_KEY_FILE,
      rateLimits: GENEROUS_RATE_LIMITS,
    });
    stacks.push(again);
    await waitFor(
      () => receiver.received.find((r) => r.event.id === row.event_id),
      20_000,
      'the delivery after the restart',
    );
    await until(async () => (await deliveries.get(row))?.status === 'succeeded', 'the row recorded');
    expect(receiver.received.filter((r) => r.event.id === row.event_id)).toHaveLength(1);
  }, 60_000);
});

async function until(probe: () => Promise<boolean>, label: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
