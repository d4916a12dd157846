import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AttemptDeps, RetryScheduler } from './domain/delivery-ports';
import type { SweepDeps } from './domain/sweep';
import type { FanOutDeps } from './domain/deliveries';
import type { Mailer, NotifyDeps } from './domain/notifications';
import { AwsRetryScheduler } from './aws/retry-scheduler';
import { SesMailer } from './aws/ses-mailer';
import { SqsDeliveryQueue } from './aws/sqs-queue';
import { LocalRetryScheduler, LogOnlyMailer, OutboxMailer } from './local-adapters';
import { secretDeps } from './runtime-secrets';
import { DynamoDeliveryStore } from './store/deliveries';
import { DynamoDueIndex } from './store/due-index';
import { DynamoEventStore } from './store/events';
import { DynamoEndpointStore } from './store/webhook-endpoints';
import { guardPolicyFromEnv, timeScale } from './webhooks/config';
import { DEFAULT_DEFER_MS, DEFAULT_TIMEOUT_MS } from './webhooks/policy';
import { httpSender } from './webhooks/sender';
import { checkUrl } from './webhooks/url-guard';

export type PipelineDeps = FanOutDeps & AttemptDeps & NotifyDeps & SweepDeps;

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number of milliseconds, got '${raw}'`);
  return value;
}

function scheduler(env: NodeJS.ProcessEnv, queue: SqsDeliveryQueue): RetryScheduler {
  if (env.RETRY_SCHEDULER === 'local') return new LocalRetryScheduler(queue);
  return new AwsRetryScheduler(queue, new SchedulerClient({}), {
    groupName: required(env, 'SCHEDULER_GROUP'),
    queueArn: required(env, 'QUEUE_ARN'),
    roleArn: required(env, 'SCHEDULER_ROLE_ARN'),
    deadLetterArn: required(env, 'SCHEDULER_DLQ_ARN'),
  });
}

function mailer(env: NodeJS.ProcessEnv): Mailer {
  if (env.SES_FROM_ADDRESS) return new SesMailer(new SESv2Client({}), env.SES_FROM_ADDRESS);
  if (env.OUTBOX_DIR) return new OutboxMailer(env.OUTBOX_DIR);
  return new LogOnlyMailer();
}

let cached: { key: string; deps: PipelineDeps } | undefined;

/** Adapters of the fan-out and delivery functions, chosen from the environment once per container. */
export function pipelineDeps(env: NodeJS.ProcessEnv = process.env): PipelineDeps {
  const base = secretDeps();
  const key = `${base.db.tableName}|${env.QUEUE_URL}|${env.TIME_SCALE}|${env.DELIVERY_TIMEOUT_MS}|${env.DELIVERY_DEFER_MS}|${env.WEBHOOK_ALLOW_INSECURE_LOCAL}`;
  if (cached?.key === key) return cached.deps;
  const queue = new SqsDeliveryQueue(new SQSClient({}), required(env, 'QUEUE_URL'));
  const policy = guardPolicyFromEnv(env);
  const endpoints = new DynamoEndpointStore(base.db);
  const timeoutMs = positive(env, 'DELIVERY_TIMEOUT_MS', DEFAULT_TIMEOUT_MS);
  let mail: Mailer | undefined;
  let retries: RetryScheduler | undefined;
  const deps: PipelineDeps = {
    deliveries: new DynamoDeliveryStore(base.db),
    endpoints,
    notifications: new DynamoEventStore(base.db),
    shops: base.shops,
    queue,
    // Built on first use: the sweeper has no scheduler settings and never schedules.
    get scheduler() {
      return (retries ??= scheduler(env, queue));
    },
    due: new DynamoDueIndex(base.db),
    sender: httpSender(policy, timeoutMs),
    settings: { timeoutMs, deferMs: positive(env, 'DELIVERY_DEFER_MS', DEFAULT_DEFER_MS) },
    get cipher() {
      return base.cipher;
    },
    get mailer() {
      return (mail ??= mailer(env));
    },
    checkTarget: (url) => checkUrl(url, policy, undefined, 'refuse'),
    timeScale: timeScale(env),
    now: () => new Date(),
  };
  cached = { key, deps };
  return deps;
}
