import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { logger } from '../../shared/logger';
import { observeTable, type Dynamo } from '../../shared/store/client';
import { passesFanoutFilter } from '../../shared/stream-filters';
import { sweepGraceMs } from '../../shared/delivery/policy';
import { LocalRetryScheduler } from './adapters';
import { chaosFor, chaosSpec, emptyTally, type ChaosDraws, type ChaosSettings } from './chaos';
import { localChaos, localConfig, localVariables } from './config';
import type { LocalStackOptions } from './options';
import { installInvokeStore } from './invocations';
import { startLocalSweeper } from './sweeper';
import { breakLeasesOfLastRun } from './leases';
import { indexFastPathRowsOfLastRun } from './fast-path-rows';
import { startQueuePoller, type QueuePoller } from './queue-poller';
import { startLocalQueues, type LocalQueues } from './sqs';
import { startStreamPoller } from './stream-poller';
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
  const { chaos, chaosOf, tally } = chaosOfStart(options, variables);
  // Everything but DynamoDB Local this start has started, each with its stop: stopped last first.
  const started: Stops = [];
  const stopServing = async () => {
    for (const stop of started.splice(0).reverse()) await stop();
  };
  let dynamodb: DynamoDbLocal | undefined;
  /** Where the table this start created is (dropped should the start fail). */
  let createdOn: string | undefined;
  try {
    if (!options.dynamodbEndpoint) {
      dynamodb = await startDynamoDbLocal({ port: options.dynamodbPort ?? 0, dataDir: options.dataDir });
    }
    const endpoint = options.dynamodbEndpoint ?? (dynamodb as DynamoDbLocal).endpoint;
    const created = await ensureTable(endpoint, tableName);
    if (created) createdOn = endpoint;
    const at: Where = { options, endpoint, tableName, chaosOf };
    const pipeline = await startPipeline(at, variables, started);
    const { deps, queues } = pipeline;

    const demo = await seedOrTakeOver(deps, created, options);
    await startEventSources(pipeline, at, started);
    const http = await startApi(pipeline, at, started);
    return {
      url: http.url,
      queue: { ...pipeline.queue, dlqUrl: queues.dlqUrl },
      ingestQueue: queues.ingest,
      sqs: queues.events,
      sqsApi: queues.api,
      dynamodbEndpoint: endpoint,
      dynamodbPid: dynamodb?.pid,
      tableName,
      demo,
      deps,
      env: pipeline.env,
      chaos,
      stop: async () => {
        await stopServing();
        await dynamodb?.stop();
        if (chaos) logger.info('Chaos mode: the faults played', { LOCAL_CHAOS: chaosSpec(chaos), ...tally });
      },
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

type Stops = (() => unknown)[];

/** Chaos mode's draws for each part of this start, when LOCAL_CHAOS (or the options) turn it on. */
function chaosOfStart(options: LocalStackOptions, variables: Record<string, string>) {
  const chaos = localChaos(options, variables);
  const tally = emptyTally();
  const chaosOf = (part: string) => (chaos ? chaosFor(chaos, part, tally) : undefined);
  if (chaos)
    logger.warn(
      'Chaos mode: the local queues, stream and scheduler duplicate, reorder and delay as AWS may; ' +
        'the value below replays these draws',
      { LOCAL_CHAOS: chaosSpec(chaos) },
    );
  return { chaos, chaosOf, tally };
}

/**
 * A table this start created gets the demo shop (and its data) unless told not to; a table of an
 * earlier run has that run's leases broken and its fast-path rows indexed, as its queue died with it.
 */
async function seedOrTakeOver(
  deps: LocalDeps,
  created: boolean,
  options: LocalStackOptions,
): Promise<DemoSeed | undefined> {
  if (!created) {
    await breakLeasesOfLastRun(deps.db);
    // Its fast-path rows go to the first sweep, before this run writes any.
    await indexFastPathRowsOfLastRun(deps.db, new Date());
    return undefined;
  }
  if (options.seed === false) return undefined;
  const demo = await seedDemo(deps);
  if (options.demoData !== false) demo.data = await seedDemoData(deps, demo.shop);
  return demo;
}

/** Where a start runs: its options, its table and the chaos draws of each part. */
interface Where {
  options: LocalStackOptions;
  endpoint: string;
  tableName: string;
  chaosOf: (part: string) => ChaosDraws | undefined;
}

interface Pipeline {
  queues: LocalQueues;
  queue: { endpoint: string; url: string; arn: string };
  deps: LocalDeps;
  handlers: LocalHandlers;
  /** The variables a consumer in another process needs (LocalStack.env). */
  env: Record<string, string>;
  /** The sweeper's interval: a minute in AWS, scaled by TIME_SCALE. */
  sweepEveryMs: number;
}

/**
 * The local queues and the handlers' wiring, made from this stack's config: the event pipeline
 * (stream → fan-out → queue → consumer) with local stand-ins for EventBridge Scheduler and SES.
 */
async function startPipeline(at: Where, variables: Record<string, string>, started: Stops): Promise<Pipeline> {
  const { options } = at;
  const timeoutMs = Number(variables.DELIVERY_TIMEOUT_MS);
  const queues = await startLocalQueues({
    visibilityTimeoutSeconds: options.queueVisibilitySeconds ?? Math.ceil((6 * timeoutMs) / 1000),
    port: options.sqsPort,
  });
  started.push(() => queues.stop());
  const queue = { endpoint: queues.endpoint, url: queues.queueUrl, arn: queues.queueArn };
  const { config, env } = localConfig(variables, {
    dynamodbEndpoint: at.endpoint,
    tableName: at.tableName,
    queue,
    notifyQueueUrl: queues.notifyQueueUrl,
    ingestDlqUrl: queues.ingest.dlqUrl,
    deliveryDlqUrl: queues.dlqUrl,
  });
  const deps = localDeps(config, {
    sqs: queues.api,
    outboxDir: options.outboxDir ?? (process.env.OUTBOX_DIR || join('.local', 'outbox')),
    schedulerChaos: at.chaosOf('scheduler'),
  });
  started.push(() => deps.db.client.destroy());
  // The local scheduler's timers send to the queues: cleared once the event sources have stopped.
  started.push(() => LocalRetryScheduler.clearAll());
  const handlers = (options.wrapHandlers ?? ((h: LocalHandlers) => h))(localHandlers(deps, options.deliveryMetrics));
  return { queues, queue, deps, handlers, env, sweepEveryMs: sweepGraceMs(config.webhooks.timeScale) };
}

/** Lambda's event sources, locally: the stream poller, woken by this process's writes, and a poller per queue. */
async function startEventSources({ queues, deps, handlers }: Pipeline, at: Where, started: Stops): Promise<void> {
  const { endpoint, tableName, chaosOf } = at;
  const streamPoller = await startStreamPoller({
    endpoint,
    tableName,
    handler: handlers.fanout,
    chaos: chaosOf('stream'),
  });
  started.push(() => streamPoller.stop());
  const unwatch = watchWrites(deps.db, streamPoller.wake);
  started.push(unwatch);
  const poll = (poller: QueuePoller) => started.push(() => poller.stop());
  if (at.options.consumer !== false) {
    poll(
      startQueuePoller({
        sqs: queues.events,
        queueUrl: queues.queueUrl,
        queueArn: queues.queueArn,
        handler: handlers.deliver,
        concurrency: at.options.consumerConcurrency,
        chaos: chaosOf('queue:deliveries'),
      }),
    );
  }
  // Owner emails: their own queue and consumer, as in AWS (functions/notify.ts).
  poll(
    startQueuePoller({
      sqs: queues.events,
      queueUrl: queues.notifyQueueUrl,
      queueArn: queues.notifyQueueArn,
      handler: handlers.notify,
      concurrency: 1,
      chaos: chaosOf('queue:notifications'),
    }),
  );
  // The voice platform's calls: the ingest queue and the same ingest handler, as in AWS (functions/ingest.ts).
  poll(
    startQueuePoller({
      sqs: queues.events,
      queueUrl: queues.ingest.url,
      queueArn: queues.ingest.arn,
      handler: handlers.ingest,
      concurrency: 2,
      chaos: chaosOf('queue:ingest'),
    }),
  );
}

/** The sweeper (at start it also sends what the last run left due), then the HTTP API. */
async function startApi({ handlers, sweepEveryMs }: Pipeline, at: Where, started: Stops): Promise<HttpAdapter> {
  const sweeper = startLocalSweeper({
    run: handlers.sweep,
    intervalMs: sweepEveryMs,
    startupHorizonMs: sweepEveryMs,
    chaos: at.chaosOf('sweeper'),
  });
  started.push(() => sweeper.stop());
  const http = await startHttpAdapter(handlers, at.options.port ?? 0, at.options.host);
  started.push(() => http.close());
  return http;
}
