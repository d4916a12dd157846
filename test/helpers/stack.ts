import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack';
import type { DemoSeed } from '../../lib/local/seed';
import { testEndpoint, uniqueTableName } from './table';

/** The local stack in this process, on the run's DynamoDB Local with a fresh, seeded table. */
export async function startTestStack(options: Pick<LocalStackOptions, 'allowInsecureWebhookTargets' | 'timeScale' | 'deliveryTimeoutMs' | 'outboxDir' | 'consumer' | 'queueVisibilitySeconds'> = {}): Promise<LocalStack & { demo: DemoSeed }> {
  const stack = await startLocalStack({ port: 0, dynamodbEndpoint: testEndpoint(), tableName: uniqueTableName(), secretsKeyFile: process.env.SECRETS_KEY_FILE, outboxDir: join(tmpdir(), 'shop-calls-test-outbox'), ...options });
  if (!stack.demo) throw new Error('expected a seeded demo shop');
  return stack as LocalStack & { demo: DemoSeed };
}
