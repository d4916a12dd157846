/**
 * Imported first by every local entry point that logs or runs handlers (bin/local.ts,
 * bin/consumer.ts, bin/cli.ts, bin/listen.ts, bin/smoke.ts, bench/lib/quiet.ts), before any
 * module makes Powertools' Logger or Metrics. It provides Lambda's InvokeStore as the runtime
 * does: a local stack sets AWS_LAMBDA_MAX_CONCURRENCY, a process it starts (a consumer, the CLI
 * in a test) inherits it, and Powertools then needs the store from its first use on
 * (functions/deliver.ts makes its Metrics when it loads) or fails: 'InvokeStore is not available'.
 */
import { installInvokeStore } from './invocations';

installInvokeStore();
