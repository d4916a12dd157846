import type { AwsApi } from '../../shared/aws/aws-call';
import type { TableClient } from '../../shared/store/table-api';
import { join } from 'node:path';
import { passesFanoutFilter } from '../../shared/stream-filters';
import { sweepGraceMs } from '../../shared/webhooks/policy';
import { LocalRetryScheduler } from './adapters';
import { localConfig, localVariables } from './config';
import { startLocalSweeper, type LocalSweeper } from './sweeper';
import { breakLeasesOfLastRun } from './leases';
import { startQueuePoller, type QueuePoller } from './queue-poller';
import { startLocalQueues, type LocalQueues } from './sqs';
import { startStreamPoller, type StreamPoller } from './stream-poller';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local';
import { startHttpAdapter, type HttpAdapter } from './http-adapter';
import { seedDemo, seedDemoData, type DemoSeed } from './seed';
import { localDeps, localHandlers, type LocalDeps, type LocalHandlers } from './wiring';

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
  /** With the demo shop, a few days of its calls, jobs and events (default true; tests that count turn it off). */
  demoData?: boolean;
  /** Multiplies retry offsets, the auto-disable window and the rotation grace (default 1). */
  timeScale?: number;
  /** Webhook delivery timeout in ms (default 10 000). */
  deliveryTimeoutMs?: number;
  /** Visibility timeout of the local delivery queue, in seconds (default 60: 6 × the delivery timeout). */
  queueVisibilitySeconds?: number;
  /** Run the delivery consumer in this process (default true); false to run it elsewhere (bin/consumer.ts). */
  consumer?: boolean;
  /** Batches the in-process consumer handles at a time (default 16, as the cloud's consumer concurrency allows many). */
  consumerConcurrency?: number;
  /** Where the local mailer writes .eml files (default .local/outbox). */
  outboxDir?: string;
  /** How soon a delivery over its endpoint's in-flight limit is tried again, in ms (default 100 locally). */
  deferMs?: number;
  /** Requests per second per key (default: the contract's 25 test, 100 live) and failed authentications per address (10). */
  rateLimits?: { test?: number; live?: number; authFailures?: number };
  /** Wraps the handlers before the event sources and the HTTP adapter get them (benchmarks time them and file their requests by stage). */
  wrapHandlers?: (handlers: LocalHandlers) => LocalHandlers;
}

/** The DynamoDB operations that write (the SDK's command names without `Command`). */
export const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

type Item = Record<string, unknown>;
type WriteInput = { Item?: Item; RequestItems?: Record<string, { PutRequest?: { Item?: Item } }[]>; TransactItems?: { Put?: { Item?: Item } }[] };

/** The items a write puts whole (PutItem, the puts of a batch or a transaction), as the request carries them. */
function putItems(command: string, input: WriteInput): Item[] {
  if (command === 'PutItem') return input.Item ? [input.Item] : [];
  if (command === 'BatchWriteItem') return Object.values(input.RequestItems ?? {}).flatMap((requests) => requests.flatMap((r) => (r.PutRequest?.Item ? [r.PutRequest.Item] : [])));
  if (command === 'TransactWriteItems') return (input.TransactItems ?? []).flatMap((t) => (t.Put?.Item ? [t.Put.Item] : []));
  return [];
}

/** Whether the write puts an item the fan-out's stream filter passes (the item either marshalled or plain). */
export function putsFanOutWork(command: string, input: WriteInput): boolean {
  const text = (v: unknown) => (typeof v === 'string' ? v : (v as { S?: string } | undefined)?.S);
  return putItems(command, input).some((item) =>
    passesFanoutFilter({ eventName: 'INSERT', dynamodb: { NewImage: { entity: { S: text(item.entity) }, origin: { S: text(item.origin) }, status: { S: text(item.status) } } } }),
  );
}

/**
 * The local stand-in for "the stream sees the write at once": after a table write of this
 * process that puts an item the fan-out takes (an event, a redelivered row, a running recovery), wake the
 * stream poller. Other writes (the consumer's records, leases, stats, rate-limit buckets)
 * do not: each wake-up sets off a burst of reads of the stream, and waking on every write
 * kept DynamoDB Local reading its stream while it should serve the deliveries. Writes of
 * other processes are found by the poller's idle poll. Returns the undo.
 */
function watchWrites(table: TableClient, wake: () => void): () => void {
  return table.observe((operation, input, outcome) => {
    if ('output' in outcome && putsFanOutWork(operation, input as WriteInput)) wake();
  });
}

export interface LocalStack {
  url: string;
  /** The local delivery queue, for a consumer run in another process. */
  queue: { endpoint: string; url: string; arn: string; dlqUrl: string };
  /** The SQS API the stack's event sources receive and delete on (benchmarks count its requests). */
  sqs: AwsApi;
  /** The SQS API the stack's queue adapters send on, as in AWS (benchmarks count its requests too). */
  sqsApi: AwsApi;
  dynamodbEndpoint: string;
  /** The DynamoDB Local this start launched (its watchdog shell's pid; the JVM is its child), for tools that measure it; absent when given an endpoint. */
  dynamodbPid?: number;
  tableName: string;
  /** Present when this start created the table and seeded it. */
  demo?: DemoSeed;
  /** The ports the stack's handlers run with (its table, queue, cipher…), for tests and tools in the same process. */
  deps: LocalDeps;
  /** The variables a consumer in another process (bin/consumer.ts) needs to serve this stack, as Lambda's environment. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: DynamoDB Local, the table, and the same Lambda
 * handlers behind the local HTTP adapter and the local event sources. The handlers get
 * this stack's wiring, made from its own config (its options, else the environment, else
 * local defaults): nothing is written to process.env, so stacks started one after another
 * in one process each keep their own settings.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const tableName = options.tableName ?? 'shop-calls';
  const variables = localVariables(options);
  let dynamodb: DynamoDbLocal | undefined;
  let http: HttpAdapter | undefined;
  let queues: LocalQueues | undefined;
  let streamPoller: StreamPoller | undefined;
  let queuePoller: QueuePoller | undefined;
  let notifyPoller: QueuePoller | undefined;
  let sweeper: LocalSweeper | undefined;
  let unwatch: (() => void) | undefined;
  let deps: LocalDeps | undefined;
  const stop = async () => {
    await http?.close();
    await sweeper?.stop();
    unwatch?.();
    await streamPoller?.stop();
    await queuePoller?.stop();
    await notifyPoller?.stop();
    LocalRetryScheduler.clearAll();
    await queues?.stop();
    deps?.db.doc.destroy();
    await dynamodb?.stop();
  };
  try {
    if (!options.dynamodbEndpoint) {
      dynamodb = await startDynamoDbLocal({ port: options.dynamodbPort ?? 0, dataDir: options.dataDir });
    }
    const endpoint = options.dynamodbEndpoint ?? (dynamodb as DynamoDbLocal).endpoint;
    const created = await ensureTable(endpoint, tableName);

    // The event pipeline: stream → fan-out → queue → consumer, with local stand-ins for
    // the Lambda event sources, EventBridge Scheduler and SES.
    const timeoutMs = Number(variables.DELIVERY_TIMEOUT_MS);
    queues = await startLocalQueues({ visibilityTimeoutSeconds: options.queueVisibilitySeconds ?? Math.ceil((6 * timeoutMs) / 1000) });
    const queue = { endpoint: queues.endpoint, url: queues.queueUrl, arn: queues.queueArn };
    const { config, env } = localConfig(variables, { dynamodbEndpoint: endpoint, tableName, queue, notifyQueueUrl: queues.notifyQueueUrl });
    deps = localDeps(config, { sqs: queues.api, outboxDir: options.outboxDir ?? (process.env.OUTBOX_DIR || join('.local', 'outbox')) });
    const handlers = (options.wrapHandlers ?? ((h: LocalHandlers) => h))(localHandlers(deps));

    const demo = created && options.seed !== false ? await seedDemo(deps) : undefined;
    if (demo && options.demoData !== false) demo.data = await seedDemoData(deps, demo.shop);
    if (!created) await breakLeasesOfLastRun(deps.db);

    streamPoller = await startStreamPoller({ endpoint, tableName, handler: handlers.fanout });
    unwatch = watchWrites(deps.db.doc, streamPoller.wake);
    if (options.consumer !== false) {
      queuePoller = startQueuePoller({ sqs: queues.events, queueUrl: queues.queueUrl, queueArn: queues.queueArn, handler: handlers.deliver, concurrency: options.consumerConcurrency });
    }
    // Owner emails: their own queue and consumer, as in AWS (functions/notify.ts).
    notifyPoller = startQueuePoller({ sqs: queues.events, queueUrl: queues.notifyQueueUrl, queueArn: queues.notifyQueueArn, handler: handlers.notify, concurrency: 1 });
    // Every minute (scaled) in AWS too; at start it also sends what the last run left due.
    const grace = sweepGraceMs(config.webhooks.timeScale);
    sweeper = startLocalSweeper({ run: handlers.sweep, intervalMs: grace, startupHorizonMs: grace });

    http = await startHttpAdapter(handlers, options.port ?? 0, options.host);
    return { url: http.url, queue: { ...queue, dlqUrl: queues.dlqUrl }, sqs: queues.events, sqsApi: queues.api, dynamodbEndpoint: endpoint, dynamodbPid: dynamodb?.pid, tableName, demo, deps, env, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
