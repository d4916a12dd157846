/**
 * The delivery consumer alone, in its own process, against a running local stack's queue
 * and table (started with `consumer: false`). Used to kill a consumer for real in tests.
 * Env: the stack's `env` (lib/local/stack.ts), as the cloud stack sets a Lambda's.
 */
// First: the InvokeStore, before functions/deliver.ts makes its Metrics.
import '../lib/local/lambda-runtime';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { makeHandler } from '../functions/deliver';
import { LocalRetryScheduler } from '../lib/local/adapters';
import { localFunction } from '../lib/local/invocations';
import { CONSUMER_TIMEOUT_MS } from '../lib/limits';
import { startQueuePoller } from '../lib/local/queue-poller';
import { localSqsClient } from '../lib/local/sqs';
import { SqsDeliveryQueue } from '../shared/delivery/aws/sqs-queue';
import { ConfigError, configFromEnv, parseVariables } from '../shared/config';
import { sqsOf } from '../shared/wiring/clients';
import { deliverDeps } from '../shared/wiring/pipeline';

let queueUrl: string;
let deps: ReturnType<typeof deliverDeps>;
// The event source's own SQS client (receive, delete), apart from the function's sends as in AWS.
let events: SQSClient;
try {
  const config = configFromEnv();
  queueUrl = config.queueUrl;
  events = localSqsClient(new URL(queueUrl).origin);
  const queue = new SqsDeliveryQueue(sqsOf(config), queueUrl);
  deps = deliverDeps(config, { queue, scheduler: new LocalRetryScheduler(queue) });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}
const poller = startQueuePoller({
  sqs: events,
  queueUrl,
  queueArn: parseVariables(process.env).QUEUE_ARN ?? '',
  handler: localFunction(
    'deliver',
    makeHandler(() => deps),
    CONSUMER_TIMEOUT_MS,
  ),
});
console.log('consumer ready');
const stop = () => {
  LocalRetryScheduler.clearAll();
  void poller.stop().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
