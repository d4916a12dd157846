import type { DynamoDBRecord } from 'aws-lambda';
import { marshall } from '@aws-sdk/util-dynamodb';
import { makeHandler } from '../../functions/fanout';
import type { EventFeedStore } from '../../shared/domain/event-feed';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { eventItem } from '../../shared/store/events';

const streamRecordOf = (event: EventRecord, seq: string): DynamoDBRecord => ({
  eventName: 'INSERT',
  dynamodb: { SequenceNumber: seq, NewImage: marshall(eventItem(event)) as never },
});

/** A feed whose every write takes `ms`, recording when each landed. */
function slowFeed(ms: number) {
  const landed: string[] = [];
  const feed: EventFeedStore = {
    last: async () => null,
    entriesSince: async () => [],
    put: async (_shopId, entry) => {
      await new Promise((r) => setTimeout(r, ms));
      landed.push(entry.eventId);
      return true;
    },
    markHour: async () => undefined,
    firstSeqAround: async () => 0,
    entries: async () => ({ entries: [], more: false }),
    events: async () => new Map(),
  };
  return { feed, landed };
}

describe('the fan-out handler', () => {
  it("ends its feed appends before it returns, even when every record's fan-out failed", async () => {
    const { feed, landed } = slowFeed(30);
    const events = [1, 2].map((n) => newEvent('shop_a', 'job.created', { id: `job_${n}` }, new Date()));
    const deps = {
      feed,
      now: () => new Date(),
      endpoints: {
        list: async () => {
          throw new Error('throttled');
        },
      },
    };
    const handler = makeHandler(() => deps as never);
    const out = await handler({ Records: events.map((e, i) => streamRecordOf(e, String(i + 1))) });
    expect(out.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['1', '2']);
    expect(landed).toEqual(events.map((e) => e.id));
  });
});
