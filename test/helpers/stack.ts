import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack';
import type { DemoSeed } from '../../lib/local/seed';
import { parseChaos } from '../../lib/local/chaos';
import { testEndpoint, uniqueTableName } from './table';

/**
 * Limits far above what a test sends, so tests that make many requests with one key (or many
 * bad keys) test what they are about; the rate-limit test passes the contract's own.
 */
export const GENEROUS_RATE_LIMITS = { test: 100_000, live: 100_000, authFailures: 100_000 };

/** The local stack in this process, on the run's DynamoDB Local with a fresh table: the demo shop and keys, no demo calls unless asked. */
export async function startTestStack(
  options: Pick<
    LocalStackOptions,
    | 'allowInsecureWebhookTargets'
    | 'timeScale'
    | 'deliveryTimeoutMs'
    | 'outboxDir'
    | 'consumer'
    | 'queueVisibilitySeconds'
    | 'rateLimits'
    | 'demoData'
    | 'wrapHandlers'
    | 'consumerConcurrency'
  > = {},
): Promise<LocalStack & { demo: DemoSeed }> {
  const stack = await startLocalStack({
    port: 0,
    dynamodbEndpoint: testEndpoint(),
    tableName: uniqueTableName(),
    secretsKeyFile: process.env.SECRETS_KEY_FILE,
    outboxDir: join(tmpdir(), 'shop-calls-test-outbox'),
    rateLimits: GENEROUS_RATE_LIMITS,
    demoData: false,
    ...options,
  });
  if (!stack.demo) throw new Error('expected a seeded demo shop');
  return stack as LocalStack & { demo: DemoSeed };
}

/**
 * Whether the stacks this test file starts run in chaos mode (LOCAL_CHAOS, set by the e2e-chaos project): known
 * before any starts, for a test that checks what chaos mode breaks on purpose (the wake-ups' precision).
 */
export const chaosMode = (): boolean => parseChaos(process.env.LOCAL_CHAOS, { scheduleLateMs: 0 }) !== undefined;
