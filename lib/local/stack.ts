import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { logger } from '../../shared/logger';
import { observeTable, type Dynamo } from '../../shared/store/client';
import { passesFanoutFilter } from '../../shared/stream-filters';
import { sweepGraceMs } from '../../shared/delivery/policy';
import { LocalRetryScheduler } from './adapters';
import { chaosFor, chaosSpec, emptyTally, type ChaosSettings } from './chaos';
import { localChaos, localConfig, localVariables } from './config';
import type { LocalStackOptions } from './options';
import { installInvokeStore } from './invocations';
import { startLocalSweeper, type LocalSweeper } from './sweeper';
import { breakLeasesOfLastRun } from './leases';
import { indexFastPathRowsOfLastRun } from './fast-path-rows';
import { startQueuePoller, type QueuePoller } from './queue-poller';
import { startLocalQueues, type LocalQueues } from './sqs';
import { startStreamPoller, type StreamPoller } from './stream-poller';
import { dropTable, ensureTable, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local';
import { startHttpAdapter, type HttpAdapter } from './http-adapter';
import { seedDemo, seedDemoData, type DemoSeed } from './seed';
import { localDeps, localHandlers, type LocalDeps, type LocalHandlers } from './wiring';
import { LOCAL_DEFAULTS } from './stack-file';

export type { LocalStackOptions } from './options';

/** The DynamoDB operations that write (the SDK's command names without `Command`). */
export const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

type Item = Record<string, unknown>;
type WriteInput = {
  Item?: Item;
  RequestItems?: Record<string, { PutRequest?: { Item?: Item } }[]>;
  TransactItems?: { Put?: { Item?: Item } }[];
};

/** The items a write puts whole (PutItem, the puts of a batch or a transaction), as the request carries them. */
function putItems(command: string, input: WriteInput): Item[] {
  if (command === 'PutItem') return input.Item ? [input.Item] : [];
  if (command === 'BatchWriteItem')
    return Object.values(input.RequestItems ?? {}).flatMap((requests) =>
      requests.flatMap((r) => (r.PutRequest?.Item ? [r.PutRequest.Item] : [])),
    );
  if (command === 'TransactWriteItems')
    return (input.TransactItems ?? []).flatMap((t) => (t.Put?.Item ? [t.Put.Item] : []));
  return [];
}

/** Whether the write puts an item the fan-out's stream filter passes (the item either marshalled or plain). */
export function putsFanOutWork(command: string, input: WriteInput): boolean {
  const text = (v: unknown) => (typeof v === 'string' ? v : (v as { S?: string } | undefined)?.S);
  return putItems(command, input).some((item) =>
    passesFanoutFilter({
      eventName: 'INSERT',
      dynamodb: {
        NewImage: {
          entity: { S: text(item.entity) },
          origin: { S: text(item.origin) },
          status: { S: text(item.status) },
        },
      },
    }),
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
function watchWrites(table: Dynamo, wake: () => void): () => void {
  return observeTable(table, (operation, input, outcome) => {
    if ('output' in outcome && putsFanOutWork(operation, input as WriteInput)) wake();
  });
}

export interface LocalStack {
  url: string;
  /** The local delivery queue, for a consumer run in another process. */
  queue: { endpoint: string; url: string; arn: string; dlqUrl: string };
  /**
   * The voice platform's way in: send a call (docs/api.md, Call ingest) here; what cannot be
   * recorded lands in its dead-letter queue.
   */
  ingestQueue: { url: string; arn: string; dlqUrl: string };
  /** The SQS client the stack's event sources receive and delete on (benchmarks count its requests). */
  sqs: SQSClient;
  /** The SQS client the stack's queue adapters send on, as in AWS (benchmarks count its requests too). */
  sqsApi: SQSClient;
  dynamodbEndpoint: string;
  /**
   * The DynamoDB Local this start launched (its watchdog shell's pid; the JVM is its child), for
   * tools that measure it; absent when given an endpoint.
   */
  dynamodbPid?: number;
  tableName: string;
  /** Present when this start created the table and seeded it. */
  demo?: DemoSeed;
  /** The ports the stack's handlers run with (its table, queue, cipher…), for tests and tools in the same process. */
  deps: LocalDeps;
  /**
   * The variables a consumer in another process (bin/consumer.ts) needs to serve this stack, as
   * Lambda's environment.
   */
  env: Record<string, string>;
  /** Chaos mode's settings, its seed among them, when it is on (LocalStackOptions.chaos, LOCAL_CHAOS). */
  chaos?: ChaosSettings;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: DynamoDB Local, the table, and the same Lambda
 * handlers behind the local HTTP adapter and the local event sources. The handlers get
 * this stack's wiring, made from its own config (its options, else the environment, else
 * local defaults): nothing is written to process.env, so stacks started one after another
 * in one process each keep their own settings. The one exception is process-wide and the
 * same for every stack: AWS_LAMBDA_MAX_CONCURRENCY, set when it starts, which tells Powertools
 * that invocations overlap here (./invocations.ts).
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  installInvokeStore();
  const tableName = options.tableName ?? LOCAL_DEFAULTS.table;
  const variables = localVariables(options);
  const chaos = localChaos(options, variables);
  const tally = emptyTally();
  const chaosOf = (part: string) => (chaos ? chaosFor(chaos, part, tally) : undefined);
  if (chaos)
    logger.warn(
      'Chaos mode: the local queues, stream and scheduler duplicate, reorder and delay as AWS may; ' +
        'the value below replays these draws',
      { LOCAL_CHAOS: chaosSpec(chaos) },
    );
  let dynamodb: DynamoDbLocal | undefined;
  let http: HttpAdapter | undefined;
  let queues: LocalQueues | undefined;
  let streamPoller: StreamPoller | undefined;
  let queuePoller: QueuePoller | undefined;
  let notifyPoller: QueuePoller | undefined;
  let ingestPoller: QueuePoller | undefined;
  let sweeper: LocalSweeper | undefined;
  let unwatch: (() => void) | undefined;
  let deps: LocalDeps | undefined;
  /** Where the table this start created is (dropped should the start fail). */
  let createdOn: string | undefined;
  /** Everything but DynamoDB Local. */
  const stopServing = async () => {
    await http?.close();
    await sweeper?.stop();
    unwatch?.();
    await streamPoller?.stop();
    await queuePoller?.stop();
    await notifyPoller?.stop();
    await ingestPoller?.stop();
    LocalRetryScheduler.clearAll();
    await queues?.stop();
    deps?.db.client.destroy();
  };
  const stop = async () => {
    await stopServing();
    await dynamodb?.stop();
    if (chaos) logger.info('Chaos mode: the faults played', { LOCAL_CHAOS: chaosSpec(chaos), ...tally });
  };
  try {
    if (!options.dynamodbEndpoint) {
      dynamodb = await startDynamoDbLocal({ port: options.dynamodbPort ?? 0, dataDir: options.dataDir });
    }
    const endpoint = options.dynamodbEndpoint ?? (dynamodb as DynamoDbLocal).endpoint;
    const created = await ensureTable(endpoint, tableName);
    if (created) createdOn = endpoint;

    // The event pipeline: stream → fan-out → queue → consumer, with local stand-ins for
    // the Lambda event sources, EventBridge Scheduler and SES.
    const timeoutMs = Number(variables.DELIVERY_TIMEOUT_MS);
    queues = await startLocalQueues({
      visibilityTimeoutSeconds: options.queueVisibilitySeconds ?? Math.ceil((6 * timeoutMs) / 1000),
      port: options.sqsPort,
    });
    const queue = { endpoint: queues.endpoint, url: queues.queueUrl, arn: queues.queueArn };
    const { config, env } = localConfig(variables, {
      dynamodbEndpoint: endpoint,
      tableName,
      queue,
      notifyQueueUrl: queues.notifyQueueUrl,
      ingestDlqUrl: queues.ingest.dlqUrl,
      deliveryDlqUrl: queues.dlqUrl,
    });
    deps = localDeps(config, {
      sqs: queues.api,
      outboxDir: options.outboxDir ?? (process.env.OUTBOX_DIR || join('.local', 'outbox')),
      schedulerChaos: chaosOf('scheduler'),
    });
    const handlers = (options.wrapHandlers ?? ((h: LocalHandlers) => h))(localHandlers(deps, options.deliveryMetrics));

    const demo = created && options.seed !== false ? await seedDemo(deps) : undefined;
    if (demo && options.demoData !== false) demo.data = await seedDemoData(deps, demo.shop);
    if (!created) {
      await breakLeasesOfLastRun(deps.db);
      // The last run's queue died with it: its fast-path rows go to the first sweep, before this run writes any.
      await indexFastPathRowsOfLastRun(deps.db, new Date());
    }

    streamPoller = await startStreamPoller({ endpoint, tableName, handler: handlers.fanout, chaos: chaosOf('stream') });
    unwatch = watchWrites(deps.db, streamPoller.wake);
    if (options.consumer !== false) {
      queuePoller = startQueuePoller({
        sqs: queues.events,
        queueUrl: queues.queueUrl,
        queueArn: queues.queueArn,
        handler: handlers.deliver,
        concurrency: options.consumerConcurrency,
        chaos: chaosOf('queue:deliveries'),
      });
    }
    // Owner emails: their own queue and consumer, as in AWS (functions/notify.ts).
    notifyPoller = startQueuePoller({
      sqs: queues.events,
      queueUrl: queues.notifyQueueUrl,
      queueArn: queues.notifyQueueArn,
      handler: handlers.notify,
      concurrency: 1,
      chaos: chaosOf('queue:notifications'),
    });
    // The voice platform's calls: the ingest queue and the same ingest handler, as in AWS (functions/ingest.ts).
    ingestPoller = startQueuePoller({
      sqs: queues.events,
      queueUrl: queues.ingest.url,
      queueArn: queues.ingest.arn,
      handler: handlers.ingest,
      concurrency: 2,
      chaos: chaosOf('queue:ingest'),
    });
    // Every minute (scaled) in AWS too; at start it also sends what the last run left due.
    const grace = sweepGraceMs(config.webhooks.timeScale);
    sweeper = startLocalSweeper({
      run: handlers.sweep,
      intervalMs: grace,
      startupHorizonMs: grace,
      chaos: chaosOf('sweeper'),
    });

    http = await startHttpAdapter(handlers, options.port ?? 0, options.host);
    return {
      url: http.url,
      queue: { ...queue, dlqUrl: queues.dlqUrl },
      ingestQueue: queues.ingest,
      sqs: queues.events,
      sqsApi: queues.api,
      dynamodbEndpoint: endpoint,
      dynamodbPid: dynamodb?.pid,
      tableName,
      demo,
      deps,
      env,
      chaos,
      stop,
    };
  } catch (err) {
    // A table this start created holds only its seed, whose key nobody was shown (the port was taken, say):
    // gone, the next start seeds it again (with DYNAMODB_DATA_DIR it would otherwise never be seeded).
    await stopServing();
    if (createdOn) await dropTable(createdOn, tableName).catch(() => undefined);
    await dynamodb?.stop();
    throw err;
  }
}
