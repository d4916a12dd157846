import type { DynamoDBRecord } from 'aws-lambda';
import { fanOut, inOrder, listingOncePerBatch, type FanOutDeps } from '../shared/delivery/fan-out';
import { messageOf } from '../shared/delivery/records';
import type { NotificationQueue } from '../shared/domain/notifications';
import { continueRecovery, type RecoveryWorkerDeps } from '../shared/delivery/recovery-worker';
import { batchHandler } from '../shared/batch';
import { appendToFeed, type FeedDeps } from '../shared/domain/event-feed';
import { wakeRateWaiting, type RateRaiseDeps } from '../shared/delivery/rate-raise';
import { oneResourceAtATime, resourceOf } from '../shared/delivery/resource-order';
import { withLambdaContext } from '../shared/logger';
import { recordOfStreamImage, type StreamedRecord } from '../shared/store/stream-images';
import { lambdaDeps } from '../shared/wiring/memo';
import { fanoutDeps } from '../shared/wiring/pipeline';

type Deps = FanOutDeps & RecoveryWorkerDeps & FeedDeps & RateRaiseDeps & { notificationQueue: NotificationQueue };

/**
 * The resource a record is about: an event's `data.id`, an ordered row's `order_key` (the same
 * key); null for the rest.
 */
const resourceOfRecord = (s: StreamedRecord): string | null =>
  s.entity === 'event'
    ? resourceOf(s.event)
    : s.entity === 'delivery' && s.delivery.order_key
      ? resourceOf({ shop_id: s.delivery.shop_id, data: { id: s.delivery.order_key } })
      : null;

/**
 * Table stream → deliveries and the event feed. The event source's filter passes only new event items, rows
 * inserted by redeliver and recover, writes of running recoveries and raises of a rate limit. Records fail
 * individually (partial batch response), so one bad record never makes the others run
 * twice. The records of a batch fan out in parallel, but one resource's one after the other
(ordered endpoints: ../shared/delivery/resource-order.ts), and a retried
 * record recreates nothing (delivery ids derive from event and endpoint, and rows are
 * written only if absent; a recovery's page is written only over the page count it read).
 */
async function handleRecord(deps: Deps, stored: StreamedRecord): Promise<void> {
  if (stored.entity === 'event') {
    await fanOut(deps, stored.event);
    // The owner's email has its own queue and function (functions/notify.ts): a refused email is
    // retried there, never here.
    if (stored.event.type === 'webhook_endpoint.disabled')
      await deps.notificationQueue.send({ shop_id: stored.event.shop_id, event_id: stored.event.id });
  } else if (stored.entity === 'rate_raise') {
    await wakeRateWaiting(deps, stored.raise);
  } else if (stored.entity === 'recovery') {
    // One page per record, so the records behind it on the shard wait for one page at most.
    await continueRecovery(deps, stored.recovery);
  } else {
    // An ordered one goes out only when no earlier delivery of its resource is open.
    await deps.queue.send((await inOrder(deps, [stored.delivery])).map((d) => messageOf(d)));
  }
}

export const makeHandler = (deps: () => Deps = lambdaDeps(fanoutDeps)) =>
  withLambdaContext(
    batchHandler({
      name: 'Fan-out',
      id: (record: DynamoDBRecord) => record.dynamodb?.SequenceNumber ?? '',
      read: (record) => recordOfStreamImage(record.dynamodb?.NewImage),
      process: async (stored) => {
        const batch = listingOncePerBatch(deps());
        // The feed takes the batch's events in stream order, beside their deliveries (shared/domain/event-feed.ts).
        const notAppended = appendToFeed(
          batch,
          stored.flatMap((s) => (s.entity === 'event' ? [s.event] : [])),
        );
        // One resource's events one after the other, so ordered endpoints see them join their chains in order.
        const results = await oneResourceAtATime(stored, resourceOfRecord, async (s) => {
          await handleRecord(batch, s);
          const failure = s.entity === 'event' ? (await notAppended).get(s.event.id) : undefined;
          if (failure) throw failure;
        });
        // The appends end with the invocation whatever became of the records: one left running would be frozen
        // with it and land later, with an `at` from before.
        await notAppended;
        return results;
      },
    }),
  );

export const handler = makeHandler();
