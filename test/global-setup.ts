import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal, type DynamoDbLocal } from '../lib/local/dynamodb-local';

declare global {
  var __dynamodbLocals: DynamoDbLocal[] | undefined;
}

/**
 * DynamoDB Local grows slow for every table created after it has held many stream records,
 * dropped or not (after 20,000, a new table's requests cost about ten times the CPU), and the
 * e2e stacks write theirs all run long: the run spreads its test files over several emulators
 * (test/helpers/table.ts), so that none holds too many. An idle one costs little; the slow ones
 * cost the whole run, which is bound by CPU.
 */
const EMULATORS = 8;

/** The run's DynamoDB Locals; workers inherit their endpoints through the environment. */
export default async function globalSetup(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'SILENT';
  process.env.AWS_REGION = 'us-east-1';
  process.env.CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef0123456789';
  // The local stand-in for KMS: a key file created on first use, removed in teardown.
  const scratch = mkdtempSync(join(tmpdir(), 'shop-calls-test-'));
  process.env.SECRETS_KEY_FILE = join(scratch, 'secrets.key');
  // Every `npm start` and tool a test runs records and reads its stack here, never in the
  // checkout's .local/, where a developer's own `npm start` keeps its file.
  process.env.LOCAL_STACK_FILE = join(scratch, 'stack.json');
  const emulators = await Promise.all(Array.from({ length: EMULATORS }, () => startDynamoDbLocal({ port: 0 })));
  globalThis.__dynamodbLocals = emulators;
  process.env.TEST_DYNAMODB_ENDPOINTS = emulators.map((e) => e.endpoint).join(',');
}
