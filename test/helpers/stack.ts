import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack';
import type { DemoSeed } from '../../lib/local/seed';
import { testEndpoint, uniqueTableName } from './table';

/** The local stack in this process, on the run's DynamoDB Local with a fresh table: the demo shop and keys, no demo calls unless asked. */
export async function startTestStack(options: Pick<LocalStackOptions, 'allowInsecureWebhookTargets' | 'timeScale' | 'deliveryTimeoutMs' | 'outboxDir' | 'consumer' | 'queueVisibilitySeconds' | 'demoData'> = {}): Promise<LocalStack & { demo: DemoSeed }> {
  const stack = await startLocalStack({ port: 0, dynamodbEndpoint: testEndpoint(), tableName: uniqueTableName(), secretsKeyFile: process.env.SECRETS_KEY_FILE, outboxDir: join(tmpdir(), 'shop-calls-test-outbox'), demoData: false, ...options });
  if (!stack.demo) throw new Error('expected a seeded demo shop');
  return stack as LocalStack & { demo: DemoSeed };
}
