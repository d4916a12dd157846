/**
 * The delivery consumer alone, in its own process, against a running local stack's queue
 * and table (started with `consumer: false`). Used to kill a consumer for real in tests.
 * Env: the pipeline variables of lib/local/stack.ts pipelineEnv, plus TABLE_NAME and
 * DYNAMODB_ENDPOINT.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { handler } from '../functions/deliver';
import { startQueuePoller } from '../lib/local/queue-poller';
import { LocalRetryScheduler } from '../shared/local-adapters';

const queueUrl = process.env.QUEUE_URL;
if (!queueUrl) {
  console.error('QUEUE_URL is not set');
  process.exit(2);
}
const poller = startQueuePoller({ sqs: new SQSClient({}), queueUrl, queueArn: process.env.QUEUE_ARN ?? '', handler });
console.log('consumer ready');
const stop = () => {
  LocalRetryScheduler.clearAll();
  void poller.stop().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
