import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliverBatch } from '../shared/domain/delivery-attempt';
import type { DeliveryMessage } from '../shared/domain/deliveries';
import { logger } from '../shared/logger';
import { pipelineDeps, type PipelineDeps } from '../shared/pipeline';

/**
 * The delivery consumer: one batch of queue messages at a time (shared/domain/delivery-attempt.ts).
 * A message that fails (the table or the queue did, not the receiver) is reported alone
 * and comes back after the visibility timeout; receiver failures are normal outcomes.
 */
export const makeHandler =
  (deps: () => PipelineDeps = pipelineDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const readable: { id: string; message: DeliveryMessage }[] = [];
    for (const record of event.Records) {
      try {
        readable.push({ id: record.messageId, message: JSON.parse(record.body) as DeliveryMessage });
      } catch {
        logger.error('Unreadable delivery message dropped', { message_id: record.messageId });
      }
    }
    let results: PromiseSettledResult<string>[];
    try {
      results = await deliverBatch(deps(), readable.map((r) => r.message));
    } catch (err) {
      // The batch read failed: every message comes back.
      logger.error('Delivery batch failed', { error: err as Error });
      return { batchItemFailures: readable.map((r) => ({ itemIdentifier: r.id })) };
    }
    const failures = results.flatMap((result, i) => {
      const { id, message } = readable[i] as (typeof readable)[number];
      if (result.status === 'fulfilled') {
        logger.debug('Delivery attempt', { ...message, verdict: result.value });
        return [];
      }
      logger.error('Delivery attempt failed', { ...message, error: result.reason as Error });
      return [{ itemIdentifier: id }];
    });
    return { batchItemFailures: failures };
  };

export const handler = makeHandler();
