import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../lib/local/dynamodb-local';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack';
import type { DemoSeed } from '../../lib/local/seed';
import { parseChaos } from '../../lib/local/chaos';
import { testEndpoint, uniqueTableName } from './table';

/**
 * Limits far above what a test sends, so tests that make many requests with one key (or many
 * bad keys) test what they are about; the rate-limit test passes the contract's own.
 */
export const GENEROUS_RATE_LIMITS = { test: 100_000, live: 100_000, authFailures: 100_000 };

/**
 * A DynamoDB Local of the test file's own, started on first use and stopped after its tests. The
 * run's shared emulators grow slow with the stream records they hold, and a file whose
 * outcome rides on the emulator's write latency (a rate limit's start grace covers the admission's
 * write) would take several times as long late in the run.
 */
let own: Promise<DynamoDbLocal> | undefined;
afterAll(async () => {
  await (await own)?.stop();
  own = undefined;
});

/** The test file's own DynamoDB Local (above): for stacks that it outlives, e.g. a child stack's restarts. */
export const fileEmulator = (): Promise<DynamoDbLocal> => (own ??= startDynamoDbLocal({ port: 0 }));

/**
 * The local stack in this process on a fresh table, of the run's DynamoDB Local or, with
 * `ownEmulator`, of the file's own: the demo shop and keys, no demo calls unless asked.
 */
export async function startTestStack(
  options: { ownEmulator?: boolean } & Pick<
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
  const { ownEmulator, ...stackOptions } = options;
  const endpoint = ownEmulator ? (await fileEmulator()).endpoint : testEndpoint();
  const stack = await startLocalStack({
    port: 0,
    dynamodbEndpoint: endpoint,
    tableName: uniqueTableName(),
    secretsKeyFile: process.env.SECRETS_KEY_FILE,
    outboxDir: join(tmpdir(), 'shop-calls-test-outbox'),
    rateLimits: GENEROUS_RATE_LIMITS,
    demoData: false,
    ...stackOptions,
  });
  if (!stack.demo) throw new Error('expected a seeded demo shop');
  return stack as LocalStack & { demo: DemoSeed };
}

/**
 * Whether the stacks this test file starts run in chaos mode (LOCAL_CHAOS, set by the e2e-chaos project): known
 * before any starts, for a test that checks what chaos mode breaks on purpose (the wake-ups' precision).
 */
export const chaosMode = (): boolean => parseChaos(process.env.LOCAL_CHAOS, { scheduleLateMs: 0 }) !== undefined;
