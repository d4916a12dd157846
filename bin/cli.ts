/**
 * Operator CLI: `npm run cli -- help`. The local stack by default; `--stack NAME` a deployed one
 * (lib/cli/target.ts).
 */
import '../lib/local/lambda-runtime';
import { operatorDeps } from '../lib/cli/deps';
import { runCli } from '../lib/cli/run';
import { explainFailure, resolveTarget, TargetError } from '../lib/cli/target';
import { logger } from '../shared/logger';

// The CLI prints its own results; the library's logs only when something is wrong, unless asked.
if (!process.env.POWERTOOLS_LOG_LEVEL) logger.setLogLevel('WARN');

async function main(): Promise<number> {
  let target;
  try {
    target = resolveTarget(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof TargetError)) throw err;
    console.error(`Error: ${err.message}`);
    return 2;
  }
  const { argv, env, banner } = target;
  if (argv.length > 0 && !argv.some((a) => a === 'help' || a === '--help' || a === '-h')) console.error(banner);
  // The target's settings win over the shell's: a leftover DYNAMODB_ENDPOINT or AWS_REGION cannot redirect a write.
  return runCli(argv, () => operatorDeps({ ...process.env, ...env }), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    explain: (err) => explainFailure(err, target),
    apiUrl: target.apiUrl,
  });
}

void main().then((code) => {
  process.exitCode = code;
});
