import type { Config } from '../config';
import type { FanOutDeps } from '../delivery/fan-out';
import type { AttemptDeps, RetryScheduler } from '../delivery/ports';
import type { Mailer, NotificationQueue, NotifyDeps } from '../domain/notifications';
import type { RecoveryWorkerDeps } from '../delivery/recovery-worker';
import type { SweepDeps } from '../delivery/sweep';
import { AwsRetryScheduler } from '../delivery/aws/retry-scheduler';
import { LogOnlyMailer, SesMailer } from '../aws/ses-mailer';
import { SqsDeliveryDeadLetters, SqsIngestDeadLetters, type IngestDeadLetters } from '../aws/sqs-dead-letters';
import type { DeliveryDeadLetters } from '../delivery/dead-letters';
import { SqsNotificationQueue } from '../aws/sqs-notification-queue';
import { SqsDeliveryQueue, SqsQueueDelays } from '../delivery/aws/sqs-queue';
import { DynamoAttemptLedger } from '../delivery/dynamo/attempt-ledger';
import { DynamoCurrentDeliveries } from '../delivery/dynamo/current-deliveries';
import { DynamoDueIndex } from '../delivery/dynamo/due-index';
import { DynamoEventStore } from '../store/events';
import { DynamoEventFeed } from '../store/event-feed';
import { LastEntries, type FeedDeps } from '../domain/event-feed';
import type { RateRaiseDeps } from '../delivery/rate-raise';
import { DynamoRecoveryStore } from '../delivery/dynamo/recoveries';
import { DynamoOrderStore } from '../delivery/dynamo/resource-order';
import { DynamoShopStore } from '../store/shops';
import { DynamoAttemptDeliveryStore } from '../delivery/dynamo/attempt-deliveries';
import { DynamoFanoutDeliveryStore } from '../delivery/dynamo/fanout-deliveries';
import { DynamoEndpointGateStore } from '../delivery/dynamo/endpoint-gate';
import { DynamoEndpointStore } from '../store/webhook-endpoints';
import { readEndpoints } from '../delivery/dynamo/endpoint-state';
import { httpSender } from '../delivery/sender';
import { checkUrl } from '../delivery/url-guard';
import { cipherOf, dynamoOf, schedulerOf, sesOf, sqsOf } from './clients';
import { memo } from './memo';

/**
 * The parts of the pipeline functions: one per function, built once per config, so only
 * the owner-email function calls SES, the consumer Scheduler and KMS, and the fan-out
 * and the sweeper neither (each SDK client is made, and bundled, only where it is used:
 * shared/wiring/clients.ts). In AWS each adapter follows the config; the local stack passes
 * its own (a queue on its local SQS, timers for schedules, an outbox for emails).
 */
export interface PipelineAdapters {
  queue?: SqsDeliveryQueue;
  scheduler?: RetryScheduler;
  mailer?: Mailer;
  notificationQueue?: NotificationQueue;
  deadLetters?: DeliveryDeadLetters;
}

const now = () => new Date();

function queueOf(config: Config, adapters: PipelineAdapters): SqsDeliveryQueue {
  return adapters.queue ?? memo(config, queueOf, () => new SqsDeliveryQueue(sqsOf(config), config.queueUrl));
}

/**
 * The fan-out: stream records to delivery rows and queue messages, owner emails onto their own
 * queue, and recoveries' next pages.
 */
export function fanoutDeps(
  config: Config,
  adapters: PipelineAdapters = {},
): FanOutDeps & RecoveryWorkerDeps & FeedDeps & RateRaiseDeps & { notificationQueue: NotificationQueue } {
  return memo(config, fanoutDeps, () => ({
    endpoints: new DynamoEndpointStore(dynamoOf(config)),
    deliveries: new DynamoFanoutDeliveryStore(dynamoOf(config)),
    events: new DynamoEventStore(dynamoOf(config)),
    currentDeliveries: new DynamoCurrentDeliveries(dynamoOf(config)),
    recoveries: new DynamoRecoveryStore(dynamoOf(config)),
    order: new DynamoOrderStore(dynamoOf(config)),
    feed: new DynamoEventFeed(dynamoOf(config)),
    lastEntries: new LastEntries(),
    queue: queueOf(config, adapters),
    scheduler: adapters.scheduler ?? new SqsQueueDelays(queueOf(config, adapters)),
    notificationQueue: adapters.notificationQueue ?? new SqsNotificationQueue(sqsOf(config), config.notifyQueueUrl),
    timeScale: config.webhooks.timeScale,
    now,
  }));
}

/** The owner-email function: the event, the shop and endpoint, the claim, and SES (or the log, without a sender). */
export function notifyDeps(config: Config, adapters: PipelineAdapters = {}): NotifyDeps & { events: DynamoEventStore } {
  return memo(config, notifyDeps, () => {
    const events = new DynamoEventStore(dynamoOf(config));
    return {
      events,
      notifications: events,
      shops: new DynamoShopStore(dynamoOf(config)),
      endpoints: new DynamoEndpointStore(dynamoOf(config)),
      mailer: adapters.mailer ?? (config.sesFrom ? new SesMailer(sesOf(config), config.sesFrom) : new LogOnlyMailer()),
      now,
    };
  });
}

/** The consumer: signs and sends, records, and schedules the next attempt. */
export function deliverDeps(config: Config, adapters: PipelineAdapters = {}): AttemptDeps {
  return memo(config, deliverDeps, () => {
    const { allowInsecureLocal, timeoutMs, deferMs, timeScale } = config.webhooks;
    const policy = { allowInsecureLocal };
    const queue = queueOf(config, adapters);
    return {
      deliveries: new DynamoAttemptDeliveryStore(dynamoOf(config)),
      endpoints: new DynamoEndpointGateStore(dynamoOf(config)),
      ledger: new DynamoAttemptLedger(dynamoOf(config)),
      order: new DynamoOrderStore(dynamoOf(config)),
      queue,
      scheduler: adapters.scheduler ?? new AwsRetryScheduler(queue, schedulerOf(config), config.scheduler),
      sender: httpSender(policy, timeoutMs),
      cipher: cipherOf(config),
      checkTarget: (url) => checkUrl(url, policy, undefined, 'refuse'),
      settings: { timeoutMs, deferMs },
      timeScale,
      now,
    };
  });
}

/**
 * The sweeper: the delivery dead-letter queue into the due index, the due index back onto the
 * queue, and a nudge to stalled recoveries; it never schedules or sends.
 */
export function sweepDeps(
  config: Config,
  adapters: PipelineAdapters = {},
): SweepDeps & Pick<RecoveryWorkerDeps, 'recoveries'> {
  return memo(config, sweepDeps, () => ({
    due: new DynamoDueIndex(dynamoOf(config)),
    deadLetters:
      adapters.deadLetters ??
      (config.deliveryDlqUrl ? new SqsDeliveryDeadLetters(sqsOf(config), config.deliveryDlqUrl) : undefined),
    order: new DynamoOrderStore(dynamoOf(config)),
    recoveries: new DynamoRecoveryStore(dynamoOf(config)),
    endpoints: { getMany: (refs) => readEndpoints(dynamoOf(config), refs) },
    queue: queueOf(config, adapters),
    timeScale: config.webhooks.timeScale,
    now,
  }));
}

/**
 * The ingest function's queue side: where a call it can never record is set aside (with callDeps,
 * which records the rest).
 */
export function ingestDeadLetterDeps(config: Config): { ingestDeadLetters: IngestDeadLetters } {
  return memo(config, ingestDeadLetterDeps, () => ({
    ingestDeadLetters: new SqsIngestDeadLetters(sqsOf(config), config.ingestDlqUrl),
  }));
}

export type PipelineDeps = ReturnType<typeof fanoutDeps> &
  ReturnType<typeof notifyDeps> &
  ReturnType<typeof deliverDeps> &
  ReturnType<typeof sweepDeps>;
