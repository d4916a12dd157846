/** Operator CLI: `npm run cli -- help`. Talks to the same table as `npm start` by default. */
import { runCli } from '../lib/cli/run';
import { secretDeps } from '../shared/runtime-secrets';

process.env.DYNAMODB_ENDPOINT ??= 'http://127.0.0.1:8000';
process.env.TABLE_NAME ??= 'shop-calls';
process.env.AWS_REGION ??= 'us-east-1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

runCli(process.argv.slice(2), secretDeps, {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
}).then((code) => {
  process.exitCode = code;
});
