import { ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

const body = JSON.stringify({
  shop_id: 'reference',
  event_id: 'evt_reference',
  delivery_id: 'dlv_reference',
  endpoint_id: 'we_reference',
  attempt: 1,
});

/** The SQS client and one request of each of `operations` to the delivery queue. */
export async function callSqs(operations: readonly string[]): Promise<void> {
  const sqs = new SQSClient({});
  const QueueUrl = process.env.QUEUE_URL;
  for (const operation of operations) {
    if (operation === 'SendMessage') await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
    else if (operation === 'SendMessageBatch')
      await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: '0', MessageBody: body }] }));
    else if (operation === 'ReceiveMessage')
      await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    else throw new Error(`the SQS reference makes no ${operation} request`);
  }
}
