import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { LOG_LEVELS } from '../shared/config';
import { API_GATEWAY_INTEGRATION_SECONDS, MAX_DELIVERY_TIMEOUT_MS } from './limits';

/** The retention values CloudWatch Logs accepts (anything else fails the deploy, after the stack is half built). */
const RETENTION_VALUES = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === 'number');

/** Deployment settings, from CDK context (`cdk deploy -c senderEmail=…`); see docs/deploy.md. */
export interface ServiceConfig {
  /** Verified SES identity the owner emails come from; unset: emails are logged, not sent. */
  senderEmail?: string;
  /** Subscribed to the alarm topic when set. */
  alarmEmail?: string;
  logRetentionDays: number;
  logLevel: string;
  /** The stage's overall throttle: a ceiling for the whole API, far above any one key's limit. */
  throttleRate: number;
  throttleBurst: number;
  /** Per-key limits (requests per second; burst = factor × rate) and failed authentications per source address. */
  rateLimits: { test: number; live: number; burstFactor: number; authFailures: number };
  /** Upper bound on concurrent delivery consumers, so slow receivers cannot starve the API. */
  consumerMaxConcurrency: number;
  deliveryTimeoutMs: number;
  /**
   * Map stack traces to the TypeScript sources at run time (NODE_OPTIONS=--enable-source-maps).
   * Off by default: parsing the source map costs every cold start ~30 ms (docs/performance.md).
   */
  sourceMaps: boolean;
  /**
   * Concurrency reserved for (and capping) the sweeper; unset: none. Lambda refuses a reservation
   * that leaves fewer than 100 unreserved, so it cannot deploy where the account quota is 10 or 50.
   */
  sweeperReservedConcurrency?: number;
  /** Active X-Ray tracing on every function; by default only the API's functions sample (docs/capacity.md, Tracing). */
  fullTracing: boolean;
  /**
   * Lambda's own START/END/REPORT lines from the delivery path's functions (Fanout, Deliver),
   * which run once or more per delivery; off by default (system log level WARN): at one event at a
   * time they would be about a tenth of what a delivery costs (docs/capacity.md, Logs).
   */
  platformLogs: boolean;
  /** Another AWS account (the voice platform's) whose principals may send calls to the ingest queue. */
  ingestSenderAccount?: string;
  /** Another AWS account (the voice platform's) that may invoke the ingest function directly. */
  ingestInvokerAccount?: string;
  /** Timeout of POST …/recover, whose window of events is sized against it (docs/capacity.md, Recover). */
  recoverTimeoutSeconds: number;
  /**
   * Errors and throttles alarmed per function rather than on Lambda's account-wide metrics: for an
   * account shared with other workloads or stacks; 2 billed alarm metrics per function (docs/capacity.md, Idle cost).
   */
  perFunctionAlarms: boolean;
  /** The CloudWatch dashboard, $3 a month: off by default to keep an idle stack cheap (docs/capacity.md, Idle cost). */
  dashboard: boolean;
}

export function configFromContext(node: Pick<Node, 'tryGetContext'>): ServiceConfig {
  const num = (key: string, fallback: number) => {
    const raw: unknown = node.tryGetContext(key);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`context ${key} must be a positive number, got ${String(raw)}`);
    return value;
  };
  // The functions refuse a burst under the rate at init (shared/config.ts): refused here, before it deploys.
  const atLeastOne = (key: string, value: number) => {
    if (value < 1) throw new Error(`context ${key} must be at least 1, got ${value}`);
    return value;
  };
  const atMost = (key: string, value: number, max: number, why: string) => {
    if (value > max) throw new Error(`context ${key} must be at most ${max} (${why}), got ${value}`);
    return value;
  };
  const integer = (key: string, value: number | undefined) => {
    if (value !== undefined && !Number.isInteger(value))
      throw new Error(`context ${key} must be a whole number, got ${value}`);
    return value;
  };
  const bool = (key: string) => String(node.tryGetContext(key) ?? 'false') === 'true';
  const str = (key: string) => (node.tryGetContext(key) as string | undefined) || undefined;
  // Checked here too: the functions refuse a level they do not know at init (shared/config.ts), so it must not deploy.
  const logLevel = str('logLevel') ?? 'INFO';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel.toUpperCase()))
    throw new Error(`context logLevel must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`);
  return {
    senderEmail: str('senderEmail'),
    alarmEmail: str('alarmEmail'),
    logRetentionDays: retention(num('logRetentionDays', 30)),
    logLevel,
    throttleRate: num('throttleRate', 1000),
    throttleBurst: num('throttleBurst', 2000),
    rateLimits: {
      test: num('rateLimitTest', 25),
      live: num('rateLimitLive', 100),
      burstFactor: atLeastOne('rateLimitBurstFactor', num('rateLimitBurstFactor', 2)),
      authFailures: num('rateLimitAuthFailures', 10),
    },
    consumerMaxConcurrency: num('consumerMaxConcurrency', 20),
    deliveryTimeoutMs: atMost(
      'deliveryTimeoutMs',
      num('deliveryTimeoutMs', 10_000),
      MAX_DELIVERY_TIMEOUT_MS,
      "the delivery consumer's 30 s timeout less 10 s to record the attempt",
    ),
    sourceMaps: bool('sourceMaps'),
    sweeperReservedConcurrency: integer(
      'sweeperReservedConcurrency',
      node.tryGetContext('sweeperReservedConcurrency') === undefined ? undefined : num('sweeperReservedConcurrency', 1),
    ),
    fullTracing: bool('fullTracing'),
    platformLogs: bool('platformLogs'),
    ingestSenderAccount: accountId('ingestSenderAccount', str('ingestSenderAccount')),
    ingestInvokerAccount: accountId('ingestInvokerAccount', str('ingestInvokerAccount')),
    recoverTimeoutSeconds: atMost(
      'recoverTimeoutSeconds',
      num('recoverTimeoutSeconds', API_GATEWAY_INTEGRATION_SECONDS),
      API_GATEWAY_INTEGRATION_SECONDS,
      "API Gateway's integration timeout: past it the caller gets 503 while recover keeps writing",
    ),
    perFunctionAlarms: bool('perFunctionAlarms'),
    dashboard: bool('dashboard'),
  };
}

function retention(days: number): number {
  if (!(RETENTION_VALUES as number[]).includes(days))
    throw new Error(
      `context logRetentionDays must be a CloudWatch Logs retention value ` +
        `(${RETENTION_VALUES.join(', ')}), got ${days}`,
    );
  return days;
}

function accountId(key: string, value: string | undefined): string | undefined {
  if (value !== undefined && !/^\d{12}$/.test(value))
    throw new Error(`context ${key} must be a 12-digit AWS account id, got ${value}`);
  return value;
}
