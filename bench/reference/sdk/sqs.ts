import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

/** The SQS client and one SendMessage to the delivery queue. */
export async function sendMessage(): Promise<void> {
  await new SQSClient({}).send(new SendMessageCommand({ QueueUrl: process.env.QUEUE_URL, MessageBody: JSON.stringify({ shop_id: 'reference', event_id: 'evt_reference' }) }));
}
