import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { join } from 'node:path';
import { handler as deliverHandler } from '../../functions/deliver';
import { handler as fanoutHandler } from '../../functions/fanout';
import { handler as sweepHandler } from '../../functions/sweep';
import { LocalRetryScheduler } from '../../shared/local-adapters';
import { runtimeDeps } from '../../shared/runtime';
import { DEFAULT_TIMEOUT_MS, sweepGraceMs } from '../../shared/webhooks/policy';
import { startLocalSweeper, type LocalSweeper } from './sweeper';
import { breakLeasesOfLastRun } from './leases';
import { startQueuePoller, type QueuePoller } from './queue-poller';
import { startLocalQueues, type LocalQueues } from './sqs';
import { startStreamPoller, type StreamPoller } from './stream-poller';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local';
import { startHttpAdapter, type HttpAdapter } from './http-adapter';
import { seedDemo, type DemoSeed } from './seed';

export interface LocalStackOptions {
  /** HTTP port; 0 picks a free one. */
  port?: number;
  host?: string;
  tableName?: string;
  /** Use this DynamoDB endpoint instead of launching DynamoDB Local. */
  dynamodbEndpoint?: string;
  /** Port for the launched DynamoDB Local; 0 picks a free one. */
  dynamodbPort?: number;
  /** Keep DynamoDB Local's data in this folder across restarts. */
  dataDir?: string;
  /**
   * Let webhook endpoints target http:// and loopback, so developers can receive on their
   * own machine. Local stack only (default on); the cloud stack never sets it.
   */
  allowInsecureWebhookTargets?: boolean;
  /** Key file for webhook secrets (the local stand-in for KMS). */
  secretsKeyFile?: string;
  /** Seed a demo shop and keys when the table was created now. */
  seed?: boolean;
  /** Multiplies retry offsets, the auto-disable window and the rotation grace (default 1). */
  timeScale?: number;
  /** Webhook delivery timeout in ms (default 10 000). */
  deliveryTimeoutMs?: number;
  /** Visibility timeout of the local delivery queue, in seconds (default 60: 6 × the delivery timeout). */
  queueVisibilitySeconds?: number;
  /** Run the delivery consumer in this process (default true); false to run it elsewhere (bin/consumer.ts). */
  consumer?: boolean;
  /** Where the local mailer writes .eml files (default .local/outbox). */
  outboxDir?: string;
  /** How soon a delivery over its endpoint's in-flight limit is tried again, in ms (default 100 locally). */
  deferMs?: number;
}

/** The DynamoDB operations that write (the SDK's command names without `Command`). */
export const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
const WATCHER = 'localStreamWake';

/**
 * The local stand-in for "the stream sees the write at once": after every table write
 * this process makes, wake the stream poller. Returns the undo.
 */
function watchWrites(client: DynamoDBClient, wake: () => void): () => void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (DYNAMODB_WRITES.has((context.commandName ?? '').replace(/Command$/, ''))) wake();
      return out;
    },
    { step: 'initialize', name: WATCHER },
  );
  return () => client.middlewareStack.remove(WATCHER);
}

/** The environment the fan-out and consumer handlers read, as the cloud stack sets it for the Lambdas. */
export function pipelineEnv(queues: Pick<LocalQueues, 'endpoint' | 'queueUrl' | 'queueArn'>, options: LocalStackOptions): Record<string, string> {
  return {
    QUEUE_URL: queues.queueUrl,
    QUEUE_ARN: queues.queueArn,
    AWS_ENDPOINT_URL_SQS: queues.endpoint,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    RETRY_SCHEDULER: 'local',
    OUTBOX_DIR: options.outboxDir ?? process.env.OUTBOX_DIR ?? join('.local', 'outbox'),
    TIME_SCALE: String(options.timeScale ?? process.env.TIME_SCALE ?? 1),
    DELIVERY_TIMEOUT_MS: String(options.deliveryTimeoutMs ?? DEFAULT_TIMEOUT_MS),
    // The local queue's delays are exact to the millisecond (SQS's are whole seconds).
    DELIVERY_DEFER_MS: String(options.deferMs ?? process.env.DELIVERY_DEFER_MS ?? 100),
  };
}

export interface LocalStack {
  url: string;
  /** The local delivery queue, for a consumer run in another process. */
  queue: { endpoint: string; url: string; arn: string; dlqUrl: string };
  dynamodbEndpoint: string;
  tableName: string;
  /** Present when this start created the table and seeded it. */
  demo?: DemoSeed;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: DynamoDB Local, the table, and the same Lambda
 * handlers behind the local HTTP adapter. Handlers read their configuration from the
 * environment, as in Lambda, so this sets it before the first request.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const tableName = options.tableName ?? 'shop-calls';
  let dynamodb: DynamoDbLocal | undefined;
  let http: HttpAdapter | undefined;
  let queues: LocalQueues | undefined;
  let streamPoller: StreamPoller | undefined;
  let queuePoller: QueuePoller | undefined;
  let sweeper: LocalSweeper | undefined;
  let unwatch: (() => void) | undefined;
  const stop = async () => {
    await http?.close();
    await sweeper?.stop();
    unwatch?.();
    await streamPoller?.stop();
    await queuePoller?.stop();
    LocalRetryScheduler.clearAll();
    await queues?.stop();
    await dynamodb?.stop();
  };
  try {
    if (!options.dynamodbEndpoint) {
      dynamodb = await startDynamoDbLocal({ port: options.dynamodbPort ?? 0, dataDir: options.dataDir });
    }
    const endpoint = options.dynamodbEndpoint ?? (dynamodb as DynamoDbLocal).endpoint;
    process.env.TABLE_NAME = tableName;
    process.env.DYNAMODB_ENDPOINT = endpoint;
    process.env.AWS_REGION ??= 'us-east-1';
    // Signs list cursors; a fresh one per start unless configured (cursors then last one run).
    process.env.CURSOR_SECRET ??= randomBytes(32).toString('hex');
    process.env.WEBHOOK_ALLOW_INSECURE_LOCAL = String(options.allowInsecureWebhookTargets ?? true);
    process.env.SECRETS_KEY_FILE = options.secretsKeyFile ?? process.env.SECRETS_KEY_FILE ?? join('.local', 'secrets.key');

    const created = await ensureTable(endpoint, tableName);
    const demo = created && options.seed !== false ? await seedDemo(runtimeDeps()) : undefined;
    if (!created) await breakLeasesOfLastRun(runtimeDeps().db);

    // The event pipeline: stream → fan-out → queue → consumer, with local stand-ins for
    // the Lambda event sources, EventBridge Scheduler and SES.
    const timeoutMs = options.deliveryTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    queues = await startLocalQueues({ visibilityTimeoutSeconds: options.queueVisibilitySeconds ?? Math.ceil((6 * timeoutMs) / 1000) });
    Object.assign(process.env, pipelineEnv(queues, { ...options, deliveryTimeoutMs: timeoutMs }));
    streamPoller = await startStreamPoller({ endpoint, tableName, handler: fanoutHandler });
    unwatch = watchWrites(runtimeDeps().db.client, streamPoller.wake);
    if (options.consumer !== false) {
      queuePoller = startQueuePoller({ sqs: queues.client, queueUrl: queues.queueUrl, queueArn: queues.queueArn, handler: deliverHandler });
    }
    // Every minute (scaled) in AWS too; at start it also sends what the last run left due.
    const grace = sweepGraceMs(options.timeScale ?? Number(process.env.TIME_SCALE ?? 1));
    sweeper = startLocalSweeper({ run: sweepHandler, intervalMs: grace, startupHorizonMs: grace });

    http = await startHttpAdapter(options.port ?? 0, options.host);
    const queue = { endpoint: queues.endpoint, url: queues.queueUrl, arn: queues.queueArn, dlqUrl: queues.dlqUrl };
    return { url: http.url, queue, dynamodbEndpoint: endpoint, tableName, demo, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
