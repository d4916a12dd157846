/**
 * `npm start`: the whole service on this machine. Configuration (all optional):
 *   PORT (3000), HOST (127.0.0.1), TABLE_NAME (shop-calls),
 *   DYNAMODB_PORT (8000) for the launched DynamoDB Local, DYNAMODB_DATA_DIR to keep data
 *   across restarts, or DYNAMODB_ENDPOINT to use a DynamoDB that is already running;
 *   and the runtime's own variables (TIME_SCALE, SECRETS_KEY_FILE, …: README), which the
 *   stack reads through shared/config.ts. A malformed value exits with code 2.
 */
import { startLocalStack } from '../lib/local/stack';
import { ConfigError } from '../shared/config';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    console.error(`${name} must be a port number (0-65535), got '${raw}'`);
    process.exit(2);
  }
  return value;
}

async function main(): Promise<void> {
  const stack = await startLocalStack({
    port: intFromEnv('PORT', 3000),
    host: process.env.HOST ?? '127.0.0.1',
    tableName: process.env.TABLE_NAME ?? 'shop-calls',
    dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT || undefined,
    dynamodbPort: intFromEnv('DYNAMODB_PORT', 8000),
    dataDir: process.env.DYNAMODB_DATA_DIR || undefined,
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the local stack`);
    stack.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  console.log(`DynamoDB: ${stack.dynamodbEndpoint} (table ${stack.tableName})`);
  if (stack.demo) {
    const { shop, writeKey, readKey } = stack.demo;
    console.log(`Demo shop:     ${shop.id} (${shop.name})`);
    console.log(`Write key:     ${writeKey.key}   (all scopes, write)`);
    console.log(`Read-only key: ${readKey.key}   (all scopes, read-only)`);
    console.log('These keys are shown once; only their hashes are stored.');
  } else {
    console.log('The table already had data: no demo seeded. Create keys with `npm run cli -- key create ...`.');
  }
  console.log(`Base URL: ${stack.url}/v1`);
  console.log(`Try: curl -H "Authorization: Bearer <key>" ${stack.url}/v1/me`);
  console.log(`API listening on ${stack.url}`);
}

main().catch((err: unknown) => {
  console.error(`Could not start the local stack: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
