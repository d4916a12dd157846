import { DEFAULT_RATE_LIMITS, limitOf, type RateLimits } from './domain/rate-limits';
import { DEFAULT_DEFER_MS, DEFAULT_TIMEOUT_MS } from './delivery/policy';

/**
 * The one reader of the runtime environment. Every variable is checked for form once, when
 * the config is made (a malformed value is an error at start, naming the variable); whether
 * a variable must be present is checked when its section is first read, so a function needs
 * only the variables of the sections it uses (the sweeper has no SCHEDULER_*, the API
 * functions no QUEUE_URL). The local stack makes its config from the same variables, as the
 * cloud stack sets them on each Lambda, without touching process.env.
 * Plain checks, not zod: every function parses its config, and most validate nothing else
 * (zod/mini and these schemas would be in each pipeline bundle, and building them in every init).
 */
type Check = [ok: (value: string) => boolean, message: string] | null;
const positiveMs = (name: string): Check => [
  (v) => /^\d+$/.test(v) && Number(v) > 0,
  `${name} must be a positive whole number of milliseconds`,
];
const positive = (name: string): Check => [
  (v) => /^\d+(\.\d+)?$/.test(v) && Number(v) > 0,
  `${name} must be a positive number`,
];

/**
 * Log levels from the most verbose; a logger at one level writes that level and those after it,
 * SILENT nothing (Powertools' names and order).
 */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const isLogLevel = (v: string): v is LogLevel => (LOG_LEVELS as readonly string[]).includes(v);

/** Every variable we read, in the order they are checked; null: any value. */
const VARIABLES = {
  TABLE_NAME: null,
  /** Set for DynamoDB Local; absent in AWS, where the SDK finds the regional endpoint. */
  DYNAMODB_ENDPOINT: null,
  AWS_REGION: null,
  /**
   * Locally; in AWS the key lives in Secrets Manager (CURSOR_SECRET_ARN), read at first use through
   * the Parameters and Secrets Lambda Extension.
   */
  CURSOR_SECRET: [(v) => v.length >= 32, 'CURSOR_SECRET must be at least 32 characters'],
  CURSOR_SECRET_ARN: null,
  /** Set by the extension's layer (lib/constructs/api.ts) where CURSOR_SECRET_ARN is; its default port otherwise. */
  PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: [
    (v) => /^\d+$/.test(v) && Number(v) > 0 && Number(v) < 65536,
    'PARAMETERS_SECRETS_EXTENSION_HTTP_PORT must be a port number',
  ],
  /** Lambda's, for the role's credentials; the extension takes it as proof that the caller is the function. */
  AWS_SESSION_TOKEN: null,
  SECRETS_KMS_KEY_ID: null,
  SECRETS_KEY_FILE: null,
  WEBHOOK_ALLOW_INSECURE_LOCAL: [
    (v) => v === 'true' || v === 'false',
    'WEBHOOK_ALLOW_INSECURE_LOCAL must be true or false',
  ],
  TIME_SCALE: [(v) => Number(v) > 0 && Number(v) <= 1, 'TIME_SCALE must be a number in (0, 1]'],
  DELIVERY_TIMEOUT_MS: positiveMs('DELIVERY_TIMEOUT_MS'),
  DELIVERY_DEFER_MS: positiveMs('DELIVERY_DEFER_MS'),
  QUEUE_URL: null,
  QUEUE_ARN: null,
  SCHEDULER_GROUP: null,
  SCHEDULER_ROLE_ARN: null,
  SCHEDULER_DLQ_ARN: null,
  SES_FROM_ADDRESS: null,
  /** The owner emails' queue (fan-out → notify function). */
  NOTIFY_QUEUE_URL: null,
  /** Where the ingest function sets aside a queue message it can never record (its queue's dead-letter queue). */
  INGEST_DLQ_URL: null,
  /** The delivery queue's dead-letter queue, which the sweeper drains into the due index. */
  DELIVERY_DLQ_URL: null,
  /** Requests per second per API key (docs/api.md, Rate limits: 25 test, 100 live, bursts of twice that). */
  RATE_LIMIT_TEST_PER_SECOND: positive('RATE_LIMIT_TEST_PER_SECOND'),
  RATE_LIMIT_LIVE_PER_SECOND: positive('RATE_LIMIT_LIVE_PER_SECOND'),
  RATE_LIMIT_BURST_FACTOR: [(v) => Number(v) >= 1, 'RATE_LIMIT_BURST_FACTOR must be a number ≥ 1'],
  /** Failed authentications per second per source address before the authorizer refuses without a route. */
  RATE_LIMIT_AUTH_FAILURES_PER_SECOND: positive('RATE_LIMIT_AUTH_FAILURES_PER_SECOND'),
  /** The `service` of every log line and metric (the names are Powertools', which the stack, docs and tests set). */
  POWERTOOLS_SERVICE_NAME: null,
  /** The loggers' level, in any case (the local stack and the tests lower it). */
  POWERTOOLS_LOG_LEVEL: [
    (v) => isLogLevel(v.toUpperCase()),
    `POWERTOOLS_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`,
  ],
} satisfies Record<string, Check>;
export type VariableName = keyof typeof VARIABLES;
export type Variables = Partial<Record<VariableName, string>>;

export interface TableConfig {
  tableName: string;
  endpoint?: string;
  region: string;
}
/** Where webhook secrets are encrypted: KMS in the cloud, a key file locally. */
export type SecretsConfig = { kmsKeyId: string } | { keyFile: string };
/**
 * The list cursors' signing key: given (local), or a secret read through the Parameters and Secrets
 * Lambda Extension on localhost (AWS).
 */
export type CursorConfig = { secret: string } | { secretArn: string; extension: { port: number; token: string } };
export interface WebhookConfig {
  /** http:// and loopback targets: the local stack only. */
  allowInsecureLocal: boolean;
  /** Multiplies every webhook clock (local stack only; 1 in the cloud). */
  timeScale: number;
  /** The receiver's time to answer. */
  timeoutMs: number;
  /** How soon a delivery over its endpoint's in-flight limit is tried again. */
  deferMs: number;
}
export interface SchedulerConfig {
  groupName: string;
  queueArn: string;
  roleArn: string;
  deadLetterArn: string;
}

export interface Config {
  readonly table: TableConfig;
  readonly secrets: SecretsConfig;
  readonly cursor: CursorConfig;
  readonly webhooks: WebhookConfig;
  readonly queueUrl: string;
  readonly notifyQueueUrl: string;
  /** The ingest queue's dead-letter queue: refused calls go there at once, not after every retry. */
  readonly ingestDlqUrl: string;
  /**
   * The delivery queue's dead-letter queue, drained by the sweeper; null: none to drain (a pipeline
   * set up without one).
   */
  readonly deliveryDlqUrl: string | null;
  readonly scheduler: SchedulerConfig;
  /** The verified SES sender of owner emails; null: emails are logged, not sent. */
  readonly sesFrom: string | null;
  /** Per-key request limits, and the failed-authentication limit per source address. */
  readonly rateLimits: RateLimits;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** The variables we read (or only `names`), checked for form; empty values count as unset. */
export function parseVariables(
  env: Record<string, string | undefined>,
  names = Object.keys(VARIABLES) as VariableName[],
): Variables {
  const vars: Variables = {};
  for (const name of names) {
    const check: Check = VARIABLES[name];
    const value = env[name];
    if (!value) continue;
    // Secrets are named, never echoed.
    if (check && !check[0](value))
      throw new ConfigError(`${check[1]}${name.includes('SECRET') ? '' : `, got '${value}'`}`);
    vars[name] = value;
  }
  return vars;
}

function required(vars: Variables, name: VariableName, why: string): string {
  const value = vars[name];
  if (!value) throw new ConfigError(`${name} is not set (${why})`);
  return value;
}

/** The configuration of this process; each section is read from `env` when first used. */
export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  const vars = parseVariables(env);
  return {
    get table() {
      return {
        tableName: required(vars, 'TABLE_NAME', 'the table'),
        endpoint: vars.DYNAMODB_ENDPOINT,
        region: vars.AWS_REGION ?? 'us-east-1',
      };
    },
    get secrets(): SecretsConfig {
      if (vars.SECRETS_KMS_KEY_ID) return { kmsKeyId: vars.SECRETS_KMS_KEY_ID };
      if (vars.SECRETS_KEY_FILE) return { keyFile: vars.SECRETS_KEY_FILE };
      throw new ConfigError('Set SECRETS_KMS_KEY_ID (AWS) or SECRETS_KEY_FILE (local) to store webhook secrets');
    },
    get cursor(): CursorConfig {
      if (vars.CURSOR_SECRET) return { secret: vars.CURSOR_SECRET };
      if (vars.CURSOR_SECRET_ARN) {
        const port = Number(vars.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? '2773');
        return {
          secretArn: vars.CURSOR_SECRET_ARN,
          extension: { port, token: required(vars, 'AWS_SESSION_TOKEN', 'the Parameters and Secrets extension') },
        };
      }
      throw new ConfigError('Set CURSOR_SECRET (at least 32 characters) or CURSOR_SECRET_ARN to sign list cursors');
    },
    get webhooks() {
      return {
        allowInsecureLocal: vars.WEBHOOK_ALLOW_INSECURE_LOCAL === 'true',
        timeScale: vars.TIME_SCALE ? Number(vars.TIME_SCALE) : 1,
        timeoutMs: vars.DELIVERY_TIMEOUT_MS ? Number(vars.DELIVERY_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS,
        deferMs: vars.DELIVERY_DEFER_MS ? Number(vars.DELIVERY_DEFER_MS) : DEFAULT_DEFER_MS,
      };
    },
    get queueUrl() {
      return required(vars, 'QUEUE_URL', 'the delivery queue');
    },
    get notifyQueueUrl() {
      return required(vars, 'NOTIFY_QUEUE_URL', 'the owner emails queue');
    },
    get ingestDlqUrl() {
      return required(vars, 'INGEST_DLQ_URL', 'the ingest dead-letter queue');
    },
    get deliveryDlqUrl() {
      return vars.DELIVERY_DLQ_URL ?? null;
    },
    get scheduler() {
      const why = 'retries past 15 minutes';
      return {
        groupName: required(vars, 'SCHEDULER_GROUP', why),
        queueArn: required(vars, 'QUEUE_ARN', why),
        roleArn: required(vars, 'SCHEDULER_ROLE_ARN', why),
        deadLetterArn: required(vars, 'SCHEDULER_DLQ_ARN', why),
      };
    },
    get sesFrom() {
      return vars.SES_FROM_ADDRESS ?? null;
    },
    get rateLimits(): RateLimits {
      const factor = vars.RATE_LIMIT_BURST_FACTOR ? Number(vars.RATE_LIMIT_BURST_FACTOR) : 2;
      const rate = (value: string | undefined, fallback: number) => limitOf(value ? Number(value) : fallback, factor);
      return {
        test: rate(vars.RATE_LIMIT_TEST_PER_SECOND, DEFAULT_RATE_LIMITS.test.perSecond),
        live: rate(vars.RATE_LIMIT_LIVE_PER_SECOND, DEFAULT_RATE_LIMITS.live.perSecond),
        authFailures: rate(vars.RATE_LIMIT_AUTH_FAILURES_PER_SECOND, DEFAULT_RATE_LIMITS.authFailures.perSecond),
      };
    },
  };
}

export interface LoggingConfig {
  serviceName: string;
  /**
   * POWERTOOLS_LOG_LEVEL's, or INFO. Lambda's own level (AWS_LAMBDA_LOG_LEVEL, advanced logging
   * controls) wins over it: Powertools reads that one itself.
   */
  logLevel: LogLevel;
}

/**
 * What the logger and the metrics need, checked apart from the rest: the logger is made when its
 * module loads, before a function reads its config, and must not fail over a variable it does
 * not use (a bad one of its own does fail, naming it; Powertools would fall back to INFO silently).
 */
export function loggingFromEnv(env: Record<string, string | undefined> = process.env): LoggingConfig {
  const vars = parseVariables(env, ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_LOG_LEVEL']);
  return {
    serviceName: vars.POWERTOOLS_SERVICE_NAME ?? 'shop-calls-api',
    logLevel: (vars.POWERTOOLS_LOG_LEVEL?.toUpperCase() as LogLevel | undefined) ?? 'INFO',
  };
}
