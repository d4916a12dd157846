import type { Context, SQSRecord } from 'aws-lambda';
import { batchHandler, type BatchResponse } from '../shared/batch';
import { deliverBatch } from '../shared/delivery/deliver-batch';
import { withoutEvent, type DeliveryMessage } from '../shared/delivery/records';
import type { AttemptDeps } from '../shared/delivery/ports';
import { logger, withLambdaContext } from '../shared/logger';
import {
  countVerdicts,
  NO_METRICS,
  withDeliveryMetrics,
  type MetricSink,
} from '../shared/observability/delivery-metrics';
import { powertoolsMetrics } from '../shared/observability/metrics';
import { lambdaDeps } from '../shared/wiring/memo';
import { deliverDeps } from '../shared/wiring/pipeline';

/** A message that is not JSON can never be delivered: it is dropped, not retried. */
function readMessage(record: SQSRecord): DeliveryMessage | null {
  try {
    return JSON.parse(record.body) as DeliveryMessage;
  } catch {
    logger.error('Unreadable delivery message dropped', { message_id: record.messageId });
    return null;
  }
}

/**
 * The delivery consumer: one batch of queue messages at a time (shared/delivery/deliver-batch.ts).
 * A message that fails (the table or the queue did, not the receiver) is reported alone
 * and comes back after the visibility timeout; receiver failures are normal outcomes. If
 * the batch read fails, every message comes back. Outcomes, receiver latency and circuit
 * changes are counted on `metrics` (Powertools Metrics in Lambda, docs/operations.md) and
 * written once per invocation, at its end, whatever its outcome.
 */
export const makeHandler = (deps: () => AttemptDeps = lambdaDeps(deliverDeps), metrics: MetricSink = NO_METRICS) => {
  const batchUntil = (endsAt: number) =>
    batchHandler({
      name: 'Delivery',
      id: (record: SQSRecord) => record.messageId,
      read: readMessage,
      process: async (messages) => {
        const results = await deliverBatch(withDeliveryMetrics(deps(), metrics), messages, endsAt);
        countVerdicts(results, metrics);
        results.forEach((result, i) => {
          // Ids only: an event's data (a call's caller, its transcript) stays out of the logs.
          const message = withoutEvent(messages[i] as DeliveryMessage);
          if (result.status === 'fulfilled') logger.debug('Delivery attempt', { ...message, verdict: result.value });
          else logger.error('Delivery attempt failed', { ...message, error: result.reason as Error });
        });
        return results;
      },
    });
  return withLambdaContext(async (event: { Records: SQSRecord[] }, context?: Context): Promise<BatchResponse> => {
    // Lambda cuts the invocation off at its timeout: no request starts that could not end before.
    const endsAt = context ? Date.now() + context.getRemainingTimeInMillis() : Infinity;
    try {
      return await batchUntil(endsAt)(event);
    } finally {
      metrics.flush();
    }
  });
};

export const handler = makeHandler(lambdaDeps(deliverDeps), powertoolsMetrics());
