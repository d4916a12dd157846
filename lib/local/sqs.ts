import type { Server } from 'node:http';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { freePort } from './dynamodb-local';

export interface LocalQueues {
  endpoint: string;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  client: SQSClient;
  stop(): Promise<void>;
}

/**
 * The delivery queue and its dead-letter queue on local-aws-sqs, a pure JS SQS emulator:
 * the same SQS adapter code as in AWS talks to it over HTTP.
 */
export async function startLocalQueues(options: { visibilityTimeoutSeconds: number; maxReceiveCount?: number }): Promise<LocalQueues> {
  const port = await freePort();
  const server: Server = await createSqsServer({ port, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const dlq = await client.send(new CreateQueueCommand({ QueueName: 'deliveries-dlq' }));
  const dlqArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: 'deliveries',
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: options.maxReceiveCount ?? 5 }),
      },
    }),
  );
  const queueArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  return {
    endpoint,
    queueUrl: queue.QueueUrl as string,
    queueArn: queueArn as string,
    dlqUrl: dlq.QueueUrl as string,
    client,
    stop: async () => {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
