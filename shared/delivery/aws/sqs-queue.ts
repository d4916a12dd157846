import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryMessage, DeliveryQueue } from '../records';
import type { RetryScheduler } from '../ports';

export const SQS_MAX_DELAY_MS = 15 * 60 * 1000;

/**
 * The delivery queue. Messages carry ids (and the fan-out's, their event); the consumer reads the
 * rest from the table.
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  async send(messages: DeliveryMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      let entries = messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(m) }));
      for (let tries = 0; entries.length > 0; tries++) {
        if (tries >= 3) throw new Error(`SQS refused ${entries.length} delivery message(s)`);
        // The entries SQS did not take are in `Failed` (the request as a whole succeeded).
        const out = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
        const failed = new Set((out.Failed ?? []).map((f) => f.Id));
        entries = entries.filter((e) => failed.has(e.Id));
      }
    }
  }

  /** SQS delays are exact to the second, up to 15 minutes. */
  async sendDelayed(message: DeliveryMessage, delaySeconds: number): Promise<void> {
    const DelaySeconds = Math.min(900, Math.max(0, Math.ceil(delaySeconds)));
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message), DelaySeconds }),
    );
  }
}

/**
 * The wake-ups the queue alone can give: a delayed message, up to its 15-minute limit.
 * Past it a caller needs a schedule (the consumer's AwsRetryScheduler) or leaves the row
 * to the sweeper (the fan-out, whose deliveries it holds back have an open circuit).
 */
export class SqsQueueDelays implements Pick<RetryScheduler, 'schedule' | 'needsSchedule'> {
  constructor(
    private readonly queue: SqsDeliveryQueue,
    private readonly now: () => number = Date.now,
  ) {}

  needsSchedule(delayMs: number): boolean {
    return delayMs > SQS_MAX_DELAY_MS;
  }

  async schedule(message: DeliveryMessage, at: Date): Promise<void> {
    const delayMs = at.getTime() - this.now();
    if (this.needsSchedule(delayMs))
      throw new Error(
        `a wake-up ${Math.round(delayMs / 1000)} s out is past the queue's delay limit: it needs a schedule`,
      );
    await this.queue.sendDelayed(message, delayMs / 1000);
  }
}
