import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localConfig, localVariables } from '../../lib/local/config';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '../../lib/local/dynamodb-local';
import { startLocalQueues, type LocalQueues } from '../../lib/local/sqs';
import { localDeps, type LocalDeps } from '../../lib/local/wiring';
import type { Config } from '../../shared/config';

export interface PipelineEnv {
  dynamodb: DynamoDbLocal;
  queues: LocalQueues;
  /** The config the local stack would run with, and its wiring. */
  config: Config;
  deps: LocalDeps;
  /** The variables a consumer process (bin/consumer.ts) serving this table and queue is started with. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * DynamoDB Local, the table and the local queues with the local stack's config, but no
 * stream or queue pollers: the benchmark invokes the handlers itself.
 */
export async function startPipelineEnv(): Promise<PipelineEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const dynamodb = await startDynamoDbLocal({ port: 0 });
  try {
    const tableName = 'bench';
    await ensureTable(dynamodb.endpoint, tableName);
    const queues = await startLocalQueues({ visibilityTimeoutSeconds: 60 });
    const variables = localVariables({ secretsKeyFile: join(dir, 'secrets.key'), allowInsecureWebhookTargets: true });
    const queue = { endpoint: queues.endpoint, url: queues.queueUrl, arn: queues.queueArn };
    const { config, env } = localConfig(variables, {
      dynamodbEndpoint: dynamodb.endpoint,
      tableName,
      queue,
      notifyQueueUrl: queues.notifyQueueUrl,
    });
    const deps = localDeps(config, { sqs: queues.api, outboxDir: join(dir, 'outbox') });
    return {
      dynamodb,
      queues,
      config,
      deps,
      env,
      close: async () => {
        await queues.stop();
        await dynamodb.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await dynamodb.stop();
    throw err;
  }
}
