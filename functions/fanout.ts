import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { fanOut, messageOf } from '../shared/domain/deliveries';
import { notifyEndpointDisabled } from '../shared/domain/notifications';
import { pipelineDeps, type PipelineDeps } from '../shared/pipeline';
import { recordOfStreamImage } from '../shared/store/stream-images';

/**
 * Table stream → deliveries. The event source's filter passes only new event items and
 * rows inserted by redeliver. Records fail individually (partial batch response), so one
 * bad record never makes the others run twice. The records of a batch fan out in
 * parallel: each is independent, and a retried record recreates nothing (delivery ids
 * derive from event and endpoint, and rows are written only if absent).
 */
export async function handleRecord(deps: PipelineDeps, record: DynamoDBRecord): Promise<void> {
  const stored = recordOfStreamImage(record.dynamodb?.NewImage);
  if (stored?.entity === 'event') {
    await fanOut(deps, stored.event);
    if (stored.event.type === 'webhook_endpoint.disabled') await notifyEndpointDisabled(deps, stored.event);
  } else if (stored?.entity === 'delivery') {
    await deps.queue.send([messageOf(stored.delivery)]);
  }
}

export const makeHandler =
  (deps: () => PipelineDeps = pipelineDeps) =>
  (event: DynamoDBStreamEvent) =>
    processPartialResponse(event, (record: DynamoDBRecord) => handleRecord(deps(), record), new BatchProcessor(EventType.DynamoDBStreams), {
      throwOnFullBatchFailure: false,
      processInParallel: true,
    });

export const handler = makeHandler();
