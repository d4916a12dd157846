import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { runtimeDeps } from '../../shared/runtime';
import { ensureTable, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local';
import { startHttpAdapter, type HttpAdapter } from './http-adapter';
import { seedDemo, type DemoSeed } from './seed';

export interface LocalStackOptions {
  /** HTTP port; 0 picks a free one. */
  port?: number;
  host?: string;
  tableName?: string;
  /** Use this DynamoDB endpoint instead of launching DynamoDB Local. */
  dynamodbEndpoint?: string;
  /** Port for the launched DynamoDB Local; 0 picks a free one. */
  dynamodbPort?: number;
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
}

export interface LocalStack {
  url: string;
  dynamodbEndpoint: string;
  tableName: string;
  /** Present when this start created the table and seeded it. */
  demo?: DemoSeed;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: DynamoDB Local, the table, and the same Lambda
 * handlers behind the local HTTP adapter. Handlers read their configuration from the
 * environment, as in Lambda, so this sets it before the first request.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const tableName = options.tableName ?? 'shop-calls';
  let dynamodb: DynamoDbLocal | undefined;
  let http: HttpAdapter | undefined;
  const stop = async () => {
    await http?.close();
    await dynamodb?.stop();
  };
  try {
    if (!options.dynamodbEndpoint) {
      dynamodb = await startDynamoDbLocal({ port: options.dynamodbPort ?? 0, dataDir: options.dataDir });
    }
    const endpoint = options.dynamodbEndpoint ?? (dynamodb as DynamoDbLocal).endpoint;
    process.env.TABLE_NAME = tableName;
    process.env.DYNAMODB_ENDPOINT = endpoint;
    process.env.AWS_REGION ??= 'us-east-1';
    // Signs list cursors; a fresh one per start unless configured (cursors then last one run).
    process.env.CURSOR_SECRET ??= randomBytes(32).toString('hex');
    process.env.WEBHOOK_ALLOW_INSECURE_LOCAL = String(options.allowInsecureWebhookTargets ?? true);
    process.env.SECRETS_KEY_FILE = options.secretsKeyFile ?? process.env.SECRETS_KEY_FILE ?? join('.local', 'secrets.key');

    const created = await ensureTable(endpoint, tableName);
    const demo = created && options.seed !== false ? await seedDemo(runtimeDeps()) : undefined;
    http = await startHttpAdapter(options.port ?? 0, options.host);
    return { url: http.url, dynamodbEndpoint: endpoint, tableName, demo, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
