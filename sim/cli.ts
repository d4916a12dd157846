/**
 * `npm run sim`: the delivery engine under what AWS may do, one seeded run at a time.
 *
 *   npm run sim -- --seed 42            one run, replayed exactly, with its trace
 *   npm run sim -- --runs 2000          seeds 1..2000 (or --from N)
 *   npm run sim -- --minutes 30         a soak: runs until the time is up
 *   npm run sim -- --runs 300 --pause   each workload with a pause (an endpoint disabled and enabled round a call)
 *
 * A run that breaks a promise prints its seed, its violations and, with --shrink, the smallest
 * workload fast-check finds that still breaks it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    runs: { type: 'string' },
    from: { type: 'string' },
    minutes: { type: 'string' },
    shrink: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    pause: { type: 'boolean', default: false },
  },
});

process.env.POWERTOOLS_LOG_LEVEL = process.env.SIM_LOG_LEVEL ?? 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_REGION = 'us-east-1';
process.env.CURSOR_SECRET ??= 'sim-cursor-secret-0123456789abcdef0123456789';
process.env.SECRETS_KEY_FILE ??= join(mkdtempSync(join(tmpdir(), 'shop-calls-sim-')), 'secrets.key');

const { startDynamoDbLocal } = await import('../lib/local/dynamodb-local');
const { simulate } = await import('./simulate');

const dynamodb = await startDynamoDbLocal({ port: 0 });
try {
  const single = values.seed !== undefined;
  const summary = await simulate({
    dynamodbEndpoint: dynamodb.endpoint,
    from: single ? Number(values.seed) : Number(values.from ?? 1),
    runs: single ? 1 : values.runs ? Number(values.runs) : values.minutes ? Infinity : 100,
    deadline: values.minutes ? Date.now() + Number(values.minutes) * 60_000 : Infinity,
    shrink: values.shrink ?? false,
    trace: single || (values.trace ?? false),
    pause: values.pause ?? false,
    print: (line) => console.log(line),
  });
  process.exitCode = summary.failed.length > 0 ? 1 : 0;
} finally {
  await dynamodb.stop();
}
