/**
 * Post-deploy smoke test (docs/deploy.md, Verify):
 *   npm run smoke -- --stack NAME --receiver-url https://… [--listen PORT] [--outputs cdk-outputs.json]
 *   npm run smoke -- --local [--api-url http://127.0.0.1:3000] [--ingest-queue-url URL]   (against npm start)
 * The call goes in through the ingest queue, as the voice platform sends it.
 * Exit code 0 when the signed delivery arrived, 1 when a step failed, 2 on bad usage.
 */
import '../lib/local/lambda-runtime';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localSqsClient } from '../lib/local/sqs';
import { findStack, LOCAL_DEFAULTS, LOCAL_PORTS, localTableEnv, recordedStack } from '../lib/local/stack-file';
import { queueSender, runSmoke } from '../lib/smoke/run';
import { configFromEnv } from '../shared/config';
import { logger } from '../shared/logger';
import { apiKeyDeps, shopDeps } from '../shared/wiring/api';

if (!process.env.POWERTOOLS_LOG_LEVEL) logger.setLogLevel('WARN');

const USAGE = [
  'Usage: npm run smoke -- --stack NAME --receiver-url https://… [--listen PORT] [--outputs cdk-outputs.json] ' +
    '[--region REGION] [--timeout-seconds 60]',
  '       npm run smoke -- --local [--api-url http://127.0.0.1:3000] [--ingest-queue-url URL] [--timeout-seconds 60]',
  '--stack reads ApiUrl, TableName and IngestQueueUrl from the outputs file that ' +
    '`npx cdk deploy --outputs-file cdk-outputs.json` writes,',
  "and needs AWS credentials that may write the table and send to the ingest queue. --listen PORT starts the smoke's " +
    'own receiver',
  'on that loopback port, for a tunnel that forwards --receiver-url to it: then the signature is verified here too.',
  '--local finds the running npm start in .local/stack.json (LOCAL_STACK_FILE): its API, table and ingest queue;',
  'DYNAMODB_ENDPOINT, TABLE_NAME, PORT, --api-url, INGEST_QUEUE_URL and --ingest-queue-url override it.',
].join('\n');

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

let values: Record<string, string | boolean | undefined>;
try {
  values = parseArgs({
    options: {
      stack: { type: 'string' },
      outputs: { type: 'string' },
      region: { type: 'string' },
      local: { type: 'boolean' },
      'api-url': { type: 'string' },
      'ingest-queue-url': { type: 'string' },
      'receiver-url': { type: 'string' },
      listen: { type: 'string' },
      'timeout-seconds': { type: 'string' },
    },
    strict: true,
  }).values;
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}

type Target = {
  apiUrl: string;
  env: Record<string, string | undefined>;
  ingest: () => Promise<{ queueUrl: string; sqs: SQSClient }>;
};

/** The local stack's ingest queue: given, or the one npm start creates on its SQS port. */
async function localIngestQueue(): Promise<{ queueUrl: string; sqs: SQSClient }> {
  const given =
    (values['ingest-queue-url'] as string | undefined) ||
    process.env.INGEST_QUEUE_URL ||
    (process.env.SQS_PORT ? undefined : recordedStack(findStack())?.ingest_queue.url);
  if (given) return { queueUrl: given, sqs: localSqsClient(new URL(given).origin) };
  const endpoint = `http://${LOCAL_DEFAULTS.host}:${process.env.SQS_PORT || LOCAL_PORTS.sqs}`;
  const sqs = localSqsClient(endpoint);
  try {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: LOCAL_DEFAULTS.ingestQueue }));
    return { queueUrl: QueueUrl as string, sqs };
  } catch (err) {
    throw new Error(
      `no ingest queue at ${endpoint} ` +
        `(${(err as Error).message || (err as { code?: string }).code}): is \`npm start\` running? ` +
        `(another SQS_PORT: set it, or pass --ingest-queue-url)`,
      { cause: err },
    );
  }
}

function target(): Target {
  if (values.local) {
    // Where the running `npm start` recorded it is, unless told otherwise (lib/local/stack-file.ts).
    const stack = findStack();
    const recorded = process.env.DYNAMODB_ENDPOINT ? undefined : recordedStack(stack)?.api_url;
    return {
      apiUrl: String(
        values['api-url'] ??
          (process.env.PORT
            ? `http://127.0.0.1:${process.env.PORT}`
            : (recorded ?? `http://${LOCAL_DEFAULTS.host}:${LOCAL_PORTS.api}`)),
      ),
      env: { ...process.env, ...localTableEnv(process.env, stack) },
      ingest: localIngestQueue,
    };
  }
  const stack = typeof values.stack === 'string' ? values.stack : fail(`--stack or --local is required\n${USAGE}`);
  const file = String(values.outputs ?? 'cdk-outputs.json');
  if (!existsSync(file))
    fail(`${file} not found: deploy with \`npx cdk deploy --outputs-file ${file}\` (docs/deploy.md)`);
  const outputs = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>)[stack];
  if (!outputs?.ApiUrl || !outputs.TableName) fail(`${file} has no ApiUrl and TableName for stack ${stack}`);
  const queueUrl =
    outputs.IngestQueueUrl ??
    fail(`${file} has no IngestQueueUrl for stack ${stack} (deployed before the ingest queue? deploy again)`);
  const region = String(values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? '');
  if (!region) fail("Set the stack's region: --region or AWS_REGION");
  if (!values['receiver-url'])
    fail('--receiver-url is required with --stack: an https receiver the stack can reach (docs/deploy.md, Verify)');
  // Never DynamoDB Local here, whatever the shell has set for the local stack.
  return {
    apiUrl: outputs.ApiUrl.replace(/\/$/, ''),
    env: { ...process.env, DYNAMODB_ENDPOINT: '', TABLE_NAME: outputs.TableName, AWS_REGION: region },
    ingest: () => Promise.resolve({ queueUrl, sqs: new SQSClient({ region }) }),
  };
}

const { apiUrl, env, ingest } = target();
const config = configFromEnv(env);
const timeoutSeconds = Number(values['timeout-seconds'] ?? 60);
console.log(`Smoke test of ${apiUrl} (table ${config.table.tableName})`);
ingest()
  .then(({ queueUrl, sqs }) =>
    runSmoke(
      {
        apiUrl,
        deps: { ...shopDeps(config), ...apiKeyDeps(config) },
        ingest: { queueUrl, send: queueSender(sqs, queueUrl) },
      },
      {
        receiverUrl: values['receiver-url'] as string | undefined,
        listenPort: values.listen ? Number(values.listen) : undefined,
        timeoutMs: timeoutSeconds * 1000,
        log: (line) => console.log(line),
      },
    ).finally(() => sqs.destroy()),
  )
  .then(
    (result) => {
      console.log(
        `PASS: shop ${result.shopId}, call ${result.callId} through the ingest queue, event ${result.eventId}` +
          (result.verifiedSignature ? ', signature verified' : ' (signature checked by your receiver)'),
      );
    },
    (err: unknown) => {
      console.error(`FAIL: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
