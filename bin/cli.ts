/** Operator CLI: `npm run cli -- help`. Talks to the same table as `npm start` by default. */
import '../lib/local/lambda-runtime';
import { operatorDeps } from '../lib/cli/deps';
import { runCli } from '../lib/cli/run';
import { logger } from '../shared/logger';

// The CLI prints its own results; the library's logs only when something is wrong, unless asked.
if (!process.env.POWERTOOLS_LOG_LEVEL) logger.setLogLevel('WARN');

runCli(process.argv.slice(2), () => operatorDeps(), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
}).then((code) => {
  process.exitCode = code;
});
