import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { NotificationQueue, NotifyMessage } from '../domain/notifications';

/** The owner emails' queue on SQS: one message per webhook_endpoint.disabled event. */
export class SqsNotificationQueue implements NotificationQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: NotifyMessage): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }
}
