import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryMessage, DeliveryQueue } from '../domain/deliveries';

/** The delivery queue. Messages carry ids only; the consumer reads the rest from the table. */
export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    /** Public for its region and credentials, which the retry scheduler's requests use too. */
    readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  async send(messages: DeliveryMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      let entries = messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(m) }));
      for (let tries = 0; entries.length > 0; tries++) {
        if (tries >= 3) throw new Error(`SQS refused ${entries.length} delivery message(s)`);
        const out = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
        const failed = new Set((out.Failed ?? []).map((f) => f.Id));
        entries = entries.filter((e) => failed.has(e.Id));
      }
    }
  }

  /** SQS delays are exact to the second, up to 15 minutes. */
  async sendDelayed(message: DeliveryMessage, delaySeconds: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: Math.min(900, Math.max(0, Math.ceil(delaySeconds))) }),
    );
  }
}
