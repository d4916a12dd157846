import type { Server } from 'node:http';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { freePort } from './dynamodb-local';
import { LOCAL_DEFAULTS } from './stack-file';

export interface LocalQueues {
  endpoint: string;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  /** The owner emails' queue (fan-out → notify function) and its dead-letter queue. */
  notifyQueueUrl: string;
  notifyQueueArn: string;
  /** The voice platform's way in (the ingest queue) and its dead-letter queue. */
  ingest: { url: string; arn: string; dlqUrl: string };
  /** Queue set-up, and tests' and tools' own requests. */
  client: SQSClient;
  /** What the functions' queue adapters send on, as in AWS. */
  api: SQSClient;
  /**
   * What the local event sources receive, delete and read attributes on
   * (lib/local/queue-poller.ts): a client of their own, as Lambda's event source is not the
   * function.
   */
  events: SQSClient;
  stop(): Promise<void>;
}

/**
 * A client of the local emulator at `endpoint`, signed with fixed credentials (the emulator ignores
 * them, AWS would not).
 */
export const localSqsClient = (endpoint: string): SQSClient =>
  new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

/** The ingest queue's visibility timeout, as in the cloud stack: 6 × the ingest function's 10 s. */
const INGEST_VISIBILITY_SECONDS = 60;

/**
 * The delivery queue, the owner emails' queue, the ingest queue and their dead-letter queues on
 * local-aws-sqs, a pure JS
 * SQS emulator: the same SQS adapter code as in AWS talks to it over HTTP (the queue URLs name the emulator's host).
 * `port` 0 or unset: a free one.
 */
export async function startLocalQueues(options: {
  visibilityTimeoutSeconds: number;
  maxReceiveCount?: number;
  port?: number;
}): Promise<LocalQueues> {
  const port = options.port || (await freePort());
  const server: Server = await createSqsServer({ port, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localSqsClient(endpoint);
  const arnOf = async (url: string | undefined) =>
    (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn as string;
  /** A queue with its dead-letter queue, as in the cloud stack. */
  const withDlq = async (name: string, visibilityTimeoutSeconds = options.visibilityTimeoutSeconds) => {
    const dlq = await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
    const queue = await client.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          VisibilityTimeout: String(visibilityTimeoutSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: await arnOf(dlq.QueueUrl),
            maxReceiveCount: options.maxReceiveCount ?? 5,
          }),
        },
      }),
    );
    return { url: queue.QueueUrl as string, arn: await arnOf(queue.QueueUrl), dlqUrl: dlq.QueueUrl as string };
  };
  const deliveries = await withDlq('deliveries');
  const notifications = await withDlq('notifications');
  const ingest = await withDlq(LOCAL_DEFAULTS.ingestQueue, INGEST_VISIBILITY_SECONDS);
  const api = localSqsClient(endpoint);
  const events = localSqsClient(endpoint);
  return {
    endpoint,
    queueUrl: deliveries.url,
    queueArn: deliveries.arn,
    dlqUrl: deliveries.dlqUrl,
    notifyQueueUrl: notifications.url,
    notifyQueueArn: notifications.arn,
    ingest,
    client,
    api,
    events,
    stop: async () => {
      client.destroy();
      api.destroy();
      events.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
