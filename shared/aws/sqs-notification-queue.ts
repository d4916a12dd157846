import type { NotificationQueue, NotifyMessage } from '../domain/notifications';
import type { AwsApi } from './aws-call';
import { sendMessage } from './sqs-send';

/** The owner emails' queue on SQS: one message per webhook_endpoint.disabled event. */
export class SqsNotificationQueue implements NotificationQueue {
  constructor(
    /** The SQS API (shared/aws/aws-call.ts, built with SQS). */
    private readonly sqs: AwsApi,
    private readonly queueUrl: string,
  ) {}

  async send(message: NotifyMessage): Promise<void> {
    await sendMessage(this.sqs, this.queueUrl, JSON.stringify(message));
  }
}
