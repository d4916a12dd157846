/**
 * bin/consumer.ts with its requests counted, for bench/delivery-throughput.ts: the same
 * handler, wiring and local SQS event source in a process of its own, with every table and
 * queue request counted at its SDK client and each batch's handler
 * timed. On 'report' it stops (waiting for the batches in flight) and sends its counts back
 * over IPC.
 *
 * Env: the stack's `env`, as for bin/consumer.ts. argv[2]: batches in flight at once.
 */
import './log-at-info';
import './quiet';
import { makeHandler } from '../../functions/deliver';
import { LocalRetryScheduler } from '../../lib/local/adapters';
import { localFunction } from '../../lib/local/invocations';
import { startQueuePoller } from '../../lib/local/queue-poller';
import { localSqsClient } from '../../lib/local/sqs';
import { SqsDeliveryQueue } from '../../shared/delivery/aws/sqs-queue';
import { configFromEnv, parseVariables } from '../../shared/config';
import { dynamoOf, sqsOf } from '../../shared/wiring/clients';
import { deliverDeps } from '../../shared/wiring/pipeline';
import { powertoolsMetrics } from '../../shared/observability/metrics';
import { allStages, countCalls, newHandlerTally, timedHandler, type HandlerTally, type OpTally } from './instrument';
import { countLogBytes, logTallies, type LogTally } from './log-bytes';

export interface ConsumerReport {
  table: Record<string, OpTally>;
  sqs: Record<string, OpTally>;
  lambda: HandlerTally;
  /** Distinct endpoints over all batches (a batch's admission is one write per endpoint). */
  endpointsInBatches: number;
  /** What its handler logged (lines and EMF metrics), as CloudWatch Logs would ingest it. */
  logs: LogTally;
}

const batches = Number(process.argv[2]);
if (!Number.isInteger(batches) || batches <= 0) throw new Error('usage: consumer-child.ts <batches in flight>');
const config = configFromEnv();
// The event source's SQS client (as bin/consumer.ts) and the consumer's own sends: both are the consumer's requests.
const sqs = localSqsClient(new URL(config.queueUrl).origin);
const queue = new SqsDeliveryQueue(sqsOf(config), config.queueUrl);
const deps = deliverDeps(config, { queue, scheduler: new LocalRetryScheduler(queue) });
// deliverDeps built its stores on this config's one table client.
const table = countCalls(dynamoOf(config).doc);
const queueRequests = countCalls([sqs, sqsOf(config)]);
const lambda = newHandlerTally();
countLogBytes();
const timed = timedHandler(
  'consumer',
  localFunction(
    'deliver',
    makeHandler(() => deps, powertoolsMetrics()),
  ),
  lambda,
);
let endpointsInBatches = 0;
const handler: typeof timed = (event) => {
  endpointsInBatches += new Set(event.Records.map((r) => (JSON.parse(r.body) as { endpoint_id?: string }).endpoint_id))
    .size;
  return timed(event);
};
const poller = startQueuePoller({
  sqs,
  queueUrl: config.queueUrl,
  queueArn: parseVariables(process.env).QUEUE_ARN ?? '',
  handler,
  concurrency: batches,
  pollers: 1,
});
// One receive at a time: a stopped poller's cut-off receive still takes the next message sent (lib/local/queue-poller.ts), and the next child must find every message.

process.on('message', (message) => {
  if (message !== 'report') return;
  void poller.stop().then(() => {
    LocalRetryScheduler.clearAll();
    const report: ConsumerReport = {
      table: Object.fromEntries(allStages(table)),
      sqs: Object.fromEntries(allStages(queueRequests)),
      lambda,
      endpointsInBatches,
      logs: logTallies.get('consumer') ?? { bytes: 0, lines: 0 },
    };
    process.send?.(report, () => process.exit(0));
  });
});
process.send?.('ready');
