import type { MetricSink } from '../../shared/observability/delivery-metrics';
import type { LocalHandlers } from './wiring';

/** What `startLocalStack` (./stack.ts) takes; apart from it so ./config.ts can read it without importing the stack. */
export interface LocalStackOptions {
  /** HTTP port; 0 picks a free one. */
  port?: number;
  host?: string;
  tableName?: string;
  /** Use this DynamoDB endpoint instead of launching DynamoDB Local. */
  dynamodbEndpoint?: string;
  /** Port for the launched DynamoDB Local; 0 picks a free one. */
  dynamodbPort?: number;
  /** Port of the local SQS emulator (the delivery, owner-email and ingest queues); 0 or unset picks a free one. */
  sqsPort?: number;
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
  /**
   * Batches the in-process consumer handles at a time (default 16, as the cloud's consumer
   * concurrency allows many).
   */
  consumerConcurrency?: number;
  /** Where the local mailer writes .eml files (default .local/outbox). */
  outboxDir?: string;
  /** How soon a delivery over its endpoint's in-flight limit is tried again, in ms (default 100 locally). */
  deferMs?: number;
  /**
   * Requests per second per key (default: the contract's 25 test, 100 live) and failed
   * authentications per address (10).
   */
  rateLimits?: { test?: number; live?: number; authFailures?: number };
  /**
   * Where the consumer counts its metrics (default: nowhere; the benchmarks pass Powertools Metrics
   * to price its lines).
   */
  deliveryMetrics?: MetricSink;
  /**
   * Wraps the handlers before the event sources and the HTTP adapter get them (benchmarks time them
   * and file their requests by stage).
   */
  wrapHandlers?: (handlers: LocalHandlers) => LocalHandlers;
}
