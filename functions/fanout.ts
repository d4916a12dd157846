import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { fanOut, messageOf, type DeliveryRecord } from '../shared/domain/deliveries';
import { notifyEndpointDisabled } from '../shared/domain/notifications';
import { pipelineDeps, type PipelineDeps } from '../shared/pipeline';
import { stripKeys } from '../shared/store/client';
import { eventFromItem } from '../shared/store/events';

/**
 * Table stream → deliveries. The event source's filter passes only new event items and
 * rows inserted by redeliver. Records fail individually (partial batch response), so one
 * bad record never makes the others run twice. The records of a batch fan out in
 * parallel: each is independent, and a retried record recreates nothing (delivery ids
 * derive from event and endpoint, and rows are written only if absent).
 */
export async function handleRecord(deps: PipelineDeps, record: DynamoDBRecord): Promise<void> {
  const image = record.dynamodb?.NewImage;
  if (!image) return;
  const item = unmarshall(image as Record<string, AttributeValue>);
  if (item.entity === 'event') {
    const event = eventFromItem(item);
    await fanOut(deps, event);
    if (event.type === 'webhook_endpoint.disabled') await notifyEndpointDisabled(deps, event);
  } else if (item.entity === 'delivery') {
    await deps.queue.send([messageOf(stripKeys<DeliveryRecord>(item))]);
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
