import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from '../../lib/local/dynamodb-local';
import { pipelineEnv } from '../../lib/local/stack';
import { startLocalQueues, type LocalQueues } from '../../lib/local/sqs';

export interface PipelineEnv {
  dynamodb: DynamoDbLocal;
  queues: LocalQueues;
  close(): Promise<void>;
}

/**
 * DynamoDB Local, the table and the local queues with the environment the pipeline
 * handlers read, but no stream or queue pollers: the benchmark invokes the handlers itself.
 */
export async function startPipelineEnv(): Promise<PipelineEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const dynamodb = await startDynamoDbLocal({ port: 0 });
  try {
    const tableName = 'bench';
    await ensureTable(dynamodb.endpoint, tableName);
    Object.assign(process.env, {
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: dynamodb.endpoint,
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      WEBHOOK_ALLOW_INSECURE_LOCAL: 'true',
      SECRETS_KEY_FILE: join(dir, 'secrets.key'),
    });
    const queues = await startLocalQueues({ visibilityTimeoutSeconds: 60 });
    Object.assign(process.env, pipelineEnv(queues, { outboxDir: join(dir, 'outbox') }));
    return {
      dynamodb,
      queues,
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
