/** Operator CLI: `npm run cli -- help`. Talks to the same table as `npm start` by default. */
import { join } from 'node:path';
import { runCli } from '../lib/cli/run';
import { configFromEnv } from '../shared/config';
import { logger } from '../shared/logger';
import { apiDeps } from '../shared/wiring/api';

// The CLI prints its own results; the library's logs only when something is wrong, unless asked.
if (!process.env.POWERTOOLS_LOG_LEVEL) logger.setLogLevel('WARN');

// As `npm start` (the key file only matters if a command ever encrypts a secret; none does yet).
const defaults = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', TABLE_NAME: 'shop-calls', AWS_REGION: 'us-east-1', SECRETS_KEY_FILE: join('.local', 'secrets.key') };

runCli(process.argv.slice(2), () => apiDeps(configFromEnv({ ...defaults, ...process.env })), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
}).then((code) => {
  process.exitCode = code;
});
