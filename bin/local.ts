/**
 * `npm start`: the whole service on this machine. Configuration (all optional):
 *   PORT (3000), HOST (127.0.0.1), TABLE_NAME (shop-calls),
 *   DYNAMODB_PORT (8000) for the launched DynamoDB Local, SQS_PORT (9324) for the local queues
 *   (the ingest queue among them: `npm run smoke -- --local` finds it there), DYNAMODB_DATA_DIR to keep data
 *   across restarts, or DYNAMODB_ENDPOINT to use a DynamoDB that is already running;
 *   DELIVERY_TIMEOUT_MS (10000), WEBHOOK_ALLOW_INSECURE_LOCAL (true), TIME_SCALE (1),
 *   OUTBOX_DIR (.local/outbox), SECRETS_KEY_FILE (.local/secrets.key),
 *   LOG_FORMAT (pretty on a terminal, else json), NO_COLOR,
 *   LOCAL_STACK_FILE (.local/stack.json): where this start records its ports for the other tools,
 *   LISTEN_PORT (4242) and RECEIVER_PORT (4000): the ports it records for `npm run listen` and `npm run receiver`,
 *   LOCAL_CHAOS (off): queues, stream and scheduler that duplicate, reorder and delay as AWS may (lib/local/chaos.ts).
 * Every setting is read and checked before anything starts: a bad value exits with code 2.
 */
// First: the logger's level is checked before any module makes the logger.
import '../lib/local/logging-check';
import '../lib/local/lambda-runtime';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bannerLines } from '../lib/local/banner';
import { installPrettyLogs } from '../lib/local/pretty-logs';
import {
  DEFAULT_LISTEN_PORT,
  DEFAULT_RECEIVER_PORT,
  LOCAL_DEFAULTS,
  LOCAL_PORTS,
  removeStackFile,
  stackFilePath,
  writeStackFile,
} from '../lib/local/stack-file';
import { startLocalStack } from '../lib/local/stack';
import { logger } from '../shared/logger';
import { ConfigError } from '../shared/config';
import type { ShopStore } from '../shared/domain/shop';
import { scanShops } from '../shared/store/operator-scan';
import { DEFAULT_TIMEOUT_MS } from '../shared/delivery/policy';

function invalid(message: string): never {
  console.error(message);
  process.exit(2);
}

/** The raw value, or undefined when the variable is absent or empty (empty means "default"). */
function raw(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function intFromEnv(name: string, fallback: number): number {
  const value = raw(name);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) invalid(`${name} must be a port number (0-65535), got '${value}'`);
  return n;
}

function positiveIntFromEnv(name: string, unit: string): number | undefined {
  const value = raw(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
    invalid(`${name} must be a positive whole number of ${unit}, got '${value}'`);
  return n;
}

function boolFromEnv(name: string): boolean | undefined {
  const value = raw(name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') invalid(`${name} must be 'true' or 'false', got '${value}'`);
  return value === 'true';
}

function timeScaleFromEnv(name: string): number | undefined {
  const value = raw(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) invalid(`${name} must be a number in (0, 1], e.g. 0.001, got '${value}'`);
  return n;
}

/**
 * With DYNAMODB_DATA_DIR the table outlives a start and nothing is seeded again, so the
 * demo shop's id is remembered beside the data (its keys are never stored in clear).
 */
const DEMO_FILE = 'demo-shop.json';

function rememberDemo(dataDir: string | undefined, shopId: string): void {
  if (!dataDir) return;
  try {
    writeFileSync(join(dataDir, DEMO_FILE), `${JSON.stringify({ shop_id: shopId })}\n`);
  } catch {
    // Only a convenience for later starts.
  }
}

async function rememberedDemo(
  dataDir: string | undefined,
  shops: Pick<ShopStore, 'get'>,
): Promise<{ id: string; name: string } | undefined> {
  if (!dataDir) return undefined;
  try {
    const { shop_id } = JSON.parse(readFileSync(join(dataDir, DEMO_FILE), 'utf8')) as { shop_id?: unknown };
    if (typeof shop_id !== 'string') return undefined;
    const shop = await shops.get(shop_id); // one GetItem: is it still there?
    return shop ? { id: shop.id, name: shop.name } : undefined;
  } catch {
    return undefined;
  }
}

/** One readable, coloured line per log entry for a person at a terminal; JSON lines for anything piped. */
function setUpLogs(): void {
  const format = raw('LOG_FORMAT') ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format !== 'pretty' && format !== 'json') invalid(`LOG_FORMAT must be 'pretty' or 'json', got '${format}'`);
  if (format === 'pretty')
    installPrettyLogs(logger, { colour: process.stdout.isTTY === true && raw('NO_COLOR') === undefined });
}

async function main(): Promise<void> {
  setUpLogs();
  const dataDir = raw('DYNAMODB_DATA_DIR');
  const options = {
    port: intFromEnv('PORT', LOCAL_PORTS.api),
    host: raw('HOST') ?? LOCAL_DEFAULTS.host,
    tableName: raw('TABLE_NAME') ?? LOCAL_DEFAULTS.table,
    dynamodbEndpoint: raw('DYNAMODB_ENDPOINT'),
    dynamodbPort: intFromEnv('DYNAMODB_PORT', LOCAL_PORTS.dynamodb),
    sqsPort: intFromEnv('SQS_PORT', LOCAL_PORTS.sqs),
    dataDir,
    deliveryTimeoutMs: positiveIntFromEnv('DELIVERY_TIMEOUT_MS', 'milliseconds'),
    // Locally http:// and loopback targets are allowed unless switched off.
    allowInsecureWebhookTargets: boolFromEnv('WEBHOOK_ALLOW_INSECURE_LOCAL') ?? true,
    timeScale: timeScaleFromEnv('TIME_SCALE'),
    outboxDir: raw('OUTBOX_DIR'),
    secretsKeyFile: raw('SECRETS_KEY_FILE'),
  };
  // The ports `npm run listen` and `npm run receiver` take when given none (recorded in the stack file).
  const listenPort = intFromEnv('LISTEN_PORT', DEFAULT_LISTEN_PORT);
  const receiverPort = intFromEnv('RECEIVER_PORT', DEFAULT_RECEIVER_PORT);
  const stack = await startLocalStack(options);
  const stackFile = stackFilePath();

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the local stack`);
    removeStackFile(stackFile); // first: a tool started from now on is told no stack runs
    stack.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  // SIGHUP: the terminal was closed.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));

  let found: { id: string; name: string } | undefined;
  if (stack.demo) rememberDemo(dataDir, stack.demo.shop.id);
  else found = (await rememberedDemo(dataDir, stack.deps.shops)) ?? (await scanShops(stack.deps.db))[0];
  if (stopping) return; // a Ctrl-C during the start: nothing to record
  writeStackFile(stackFile, {
    pid: process.pid,
    started_at: new Date().toISOString(),
    api_url: stack.url,
    portal_url: `${stack.url}/portal`,
    table: {
      endpoint: stack.dynamodbEndpoint,
      name: stack.tableName,
      region: stack.env.AWS_REGION ?? LOCAL_DEFAULTS.region,
    },
    secrets_key_file: resolve(stack.env.SECRETS_KEY_FILE ?? join('.local', 'secrets.key')),
    demo_shop_id: stack.demo?.shop.id ?? found?.id ?? null,
    listen: { port: listenPort },
    receiver: { port: receiverPort },
    ingest_queue: { url: stack.ingestQueue.url, dlq_url: stack.ingestQueue.dlqUrl },
  });
  const chaos = stack.chaos ? `, chaos mode on (seed ${stack.chaos.seed})` : '';
  const settings =
    `Webhook delivery timeout ${options.deliveryTimeoutMs ?? DEFAULT_TIMEOUT_MS} ms, time scale ` +
    `${options.timeScale ?? 1}, http/loopback targets ` +
    `${options.allowInsecureWebhookTargets ? 'allowed' : 'refused'}${chaos}`;
  for (const line of bannerLines({
    url: stack.url,
    dynamodbEndpoint: stack.dynamodbEndpoint,
    tableName: stack.tableName,
    ingestQueue: stack.ingestQueue,
    seeded: stack.demo,
    found,
    stackFile,
    settings,
  }))
    console.log(line);
}

main().catch((err: unknown) => {
  console.error(`Could not start the local stack: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
