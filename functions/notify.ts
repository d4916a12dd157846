import type { SQSRecord } from 'aws-lambda';
import { batchHandler } from '../shared/batch';
import { notifyFromQueue, type NotifyMessage } from '../shared/domain/notifications';
import { logger, withLambdaContext } from '../shared/logger';
import { lambdaDeps } from '../shared/wiring/memo';
import { notifyDeps } from '../shared/wiring/pipeline';

/**
 * Owner emails (webhook_endpoint.disabled), off the stream's path: the fan-out queues the
 * event's ids, this sends the email. A failed send is reported alone and comes back after
 * the visibility timeout; after 5 receives it rests in its dead-letter queue (alarmed).
 * One email per event: notifyEndpointDisabled claims it on the event first, for less than the
 * visibility timeout, so a crashed invocation's retry sends it.
 */
export const makeHandler = (deps: () => Parameters<typeof notifyFromQueue>[0] = lambdaDeps(notifyDeps)) =>
  withLambdaContext(
    batchHandler({
      name: 'Owner email',
      id: (record: SQSRecord) => record.messageId,
      read: (record) => {
        try {
          return JSON.parse(record.body) as NotifyMessage;
        } catch {
          logger.error('Unreadable owner-email message dropped', { message_id: record.messageId });
          return null;
        }
      },
      process: (messages) => Promise.allSettled(messages.map((m) => notifyFromQueue(deps(), m))),
    }),
  );

export const handler = makeHandler();
