import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { attemptDelivery } from '../shared/domain/delivery-attempt';
import type { DeliveryMessage } from '../shared/domain/deliveries';
import { logger } from '../shared/logger';
import { pipelineDeps, type PipelineDeps } from '../shared/pipeline';

/**
 * The delivery consumer: one attempt per message, records in parallel. A record that
 * throws (the table or the queue failed, not the receiver) is reported alone and comes
 * back after the visibility timeout; receiver failures are normal outcomes, not throws.
 */
export async function handleMessage(deps: PipelineDeps, record: SQSRecord): Promise<void> {
  let message: DeliveryMessage;
  try {
    message = JSON.parse(record.body) as DeliveryMessage;
  } catch {
    logger.error('Unreadable delivery message dropped', { message_id: record.messageId });
    return;
  }
  const verdict = await attemptDelivery(deps, message);
  logger.debug('Delivery attempt', { ...message, verdict });
}

export const makeHandler =
  (deps: () => PipelineDeps = pipelineDeps) =>
  (event: SQSEvent) =>
    processPartialResponse(event, (record: SQSRecord) => handleMessage(deps(), record), new BatchProcessor(EventType.SQS), {
      throwOnFullBatchFailure: false,
      processInParallel: true,
    });

export const handler = makeHandler();
