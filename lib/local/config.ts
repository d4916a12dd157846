import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { configFromEnv, parseVariables, type Config } from '../../shared/config';
import { sweepGraceMs } from '../../shared/delivery/policy';
import { parseChaos, type ChaosSettings } from './chaos';
import type { LocalStackOptions } from './options';
import { LOCAL_DEFAULTS } from './stack-file';

/** Where the local stack's own resources are, once started. */
export interface LocalResources {
  dynamodbEndpoint: string;
  tableName: string;
  queue: { endpoint: string; url: string; arn: string };
  notifyQueueUrl: string;
  /** The ingest queue's dead-letter queue, where the ingest function sets refused calls aside. */
  ingestDlqUrl?: string;
  /** The delivery queue's dead-letter queue, which the sweeper drains. */
  deliveryDlqUrl?: string;
}

/**
 * The variables the cloud stack sets on its Lambdas, for a local stack: each from the
 * stack's options, else from the environment it was started in (npm start documents
 * them), else a local default. The stack's config is parsed from these by the same
 * `configFromEnv` as in Lambda; nothing is written to process.env.
 */
export function localVariables(
  options: LocalStackOptions,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const pick = (option: unknown, name: string, fallback: string) =>
    option !== undefined ? String(option) : env[name] || fallback;
  const variables = {
    AWS_REGION: env.AWS_REGION || LOCAL_DEFAULTS.region,
    // Signs list cursors; a fresh one per start unless configured (cursors then last one run).
    CURSOR_SECRET: env.CURSOR_SECRET || randomBytes(32).toString('hex'),
    SECRETS_KEY_FILE: pick(options.secretsKeyFile, 'SECRETS_KEY_FILE', join('.local', 'secrets.key')),
    WEBHOOK_ALLOW_INSECURE_LOCAL: pick(options.allowInsecureWebhookTargets, 'WEBHOOK_ALLOW_INSECURE_LOCAL', 'true'),
    TIME_SCALE: pick(options.timeScale, 'TIME_SCALE', '1'),
    DELIVERY_TIMEOUT_MS: pick(options.deliveryTimeoutMs, 'DELIVERY_TIMEOUT_MS', '10000'),
    // The local queue's delays are exact to the millisecond (SQS's are whole seconds).
    DELIVERY_DEFER_MS: pick(options.deferMs, 'DELIVERY_DEFER_MS', '100'),
    // Unset: the contract's limits, as in the cloud.
    RATE_LIMIT_TEST_PER_SECOND: pick(options.rateLimits?.test, 'RATE_LIMIT_TEST_PER_SECOND', ''),
    RATE_LIMIT_LIVE_PER_SECOND: pick(options.rateLimits?.live, 'RATE_LIMIT_LIVE_PER_SECOND', ''),
    RATE_LIMIT_AUTH_FAILURES_PER_SECOND: pick(
      options.rateLimits?.authFailures,
      'RATE_LIMIT_AUTH_FAILURES_PER_SECOND',
      '',
    ),
    RATE_LIMIT_BURST_FACTOR: env.RATE_LIMIT_BURST_FACTOR || '',
  };
  parseVariables(variables); // a malformed value stops the stack before anything starts
  return variables;
}

/** The full set once the table and the queue exist: the stack's config, and a separate consumer's environment. */
export function localConfig(
  variables: Record<string, string>,
  resources: LocalResources,
): { config: Config; env: Record<string, string> } {
  const env = {
    ...variables,
    TABLE_NAME: resources.tableName,
    DYNAMODB_ENDPOINT: resources.dynamodbEndpoint,
    QUEUE_URL: resources.queue.url,
    QUEUE_ARN: resources.queue.arn,
    NOTIFY_QUEUE_URL: resources.notifyQueueUrl,
    ...(resources.ingestDlqUrl ? { INGEST_DLQ_URL: resources.ingestDlqUrl } : {}),
    ...(resources.deliveryDlqUrl ? { DELIVERY_DLQ_URL: resources.deliveryDlqUrl } : {}),
    // Read by the AWS SDK itself in a consumer process (bin/consumer.ts), as Lambda's are.
    AWS_ENDPOINT_URL_SQS: resources.queue.endpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
  return { config: configFromEnv(env), env };
}

/**
 * Chaos mode's settings (./chaos.ts): from the stack's option, else LOCAL_CHAOS; undefined when off. Read
 * with the variables, before anything starts: a malformed value stops the start as theirs do.
 */
export function localChaos(
  options: Pick<LocalStackOptions, 'chaos'>,
  variables: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): ChaosSettings | undefined {
  const spec = options.chaos === undefined ? env.LOCAL_CHAOS : options.chaos || undefined;
  // A late wake-up stays within the sweeper's grace, the window in which it still comes before the sweeper's.
  return parseChaos(spec, { scheduleLateMs: sweepGraceMs(Number(variables.TIME_SCALE)) });
}
