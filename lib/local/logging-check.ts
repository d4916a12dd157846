/**
 * Imported first by bin/local.ts. The logger reads POWERTOOLS_LOG_LEVEL when its module loads,
 * before `main()` checks the other settings, and would stop the start with a stack trace; a bad
 * value is refused here instead, as every other setting is: a message naming it, exit code 2.
 */
import { ConfigError, loggingFromEnv } from '../../shared/config';

try {
  loggingFromEnv();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`Could not start the local stack: ${err.message}`);
  process.exit(2);
}
