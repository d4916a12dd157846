import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AttemptDeps, RetryScheduler } from './domain/delivery-attempt';
import type { FanOutDeps } from './domain/deliveries';
import type { Mailer, NotifyDeps } from './domain/notifications';
import { AwsRetryScheduler } from './aws/retry-scheduler';
import { SesMailer } from './aws/ses-mailer';
import { SqsDeliveryQueue } from './aws/sqs-queue';
import { LocalRetryScheduler, LogOnlyMailer, OutboxMailer } from './local-adapters';
import { secretDeps } from './runtime-secrets';
import { DynamoDeliveryStore } from './store/deliveries';
import { DynamoEventStore } from './store/events';
import { DynamoEndpointStore } from './store/webhook-endpoints';
import { guardPolicyFromEnv, timeScale } from './webhooks/config';
import { DEFAULT_TIMEOUT_MS } from './webhooks/policy';
import { httpSender } from './webhooks/sender';
import { checkUrl } from './webhooks/url-guard';

export type PipelineDeps = FanOutDeps & AttemptDeps & NotifyDeps;

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
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
  const key = `${base.db.tableName}|${env.QUEUE_URL}|${env.TIME_SCALE}|${env.DELIVERY_TIMEOUT_MS}`;
  if (cached?.key === key) return cached.deps;
  const queue = new SqsDeliveryQueue(new SQSClient({}), required(env, 'QUEUE_URL'));
  const policy = guardPolicyFromEnv(env);
  const endpoints = new DynamoEndpointStore(base.db);
  let mail: Mailer | undefined;
  const deps: PipelineDeps = {
    deliveries: new DynamoDeliveryStore(base.db),
    endpoints,
    events: new DynamoEventStore(base.db),
    shops: base.shops,
    queue,
    scheduler: scheduler(env, queue),
    sender: httpSender(policy, Number(env.DELIVERY_TIMEOUT_MS ?? DEFAULT_TIMEOUT_MS)),
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
