import type { AppendOutcome, EventFeedStore, FeedEntry, FeedHead, FeedPosition } from '../domain/event-feed';
import type { EventRecord } from '../domain/events';
import { EVENT_RETENTION_SECONDS } from '../domain/events';
import { cancellationReasons, getRecord, retryConflicts, type Dynamo } from './client';
import { eventFromItem, eventItem } from './events';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';

const FEED_PREFIX = skPrefix.feed;
/** Above every entry's key, below `FEEDHEAD`. */
const FEED_END = `${FEED_PREFIX}~`;
const entrySk = (shopId: string, p: FeedPosition): string => keys.feedEntry(shopId, p.at, p.seq).sk;

/**
 * The feed in the shop's partition: its head (`FEEDHEAD`: the last `seq` and `at`) and one
 * entry per event (`FEED#<at>#<seq>`: a copy of the event, expiring with it). The event item
 * records its `feed_seq`, which is how a retried append finds it already done.
 */
export class DynamoEventFeed implements EventFeedStore {
  constructor(private readonly db: Dynamo) {}

  head(shopId: string): Promise<FeedHead | null> {
    return getRecord<FeedHead>(this.db, keys.feedHead(shopId));
  }

  async append(event: EventRecord, head: FeedHead | null, next: FeedEntry): Promise<AppendOutcome> {
    const headKey = keys.feedHead(event.shop_id);
    const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...copy } = eventItem(event);
    try {
      await retryConflicts(() =>
        this.db.doc.transactWrite({
          TransactItems: [
            {
              Put: {
                TableName: this.db.tableName,
                Item: { ...headKey, entity: 'feed_head', at: next.at, seq: next.seq },
                ConditionExpression: head ? 'seq = :seq' : 'attribute_not_exists(pk)',
                ...(head ? { ExpressionAttributeValues: { ':seq': head.seq } } : {}),
              },
            },
            {
              Put: {
                TableName: this.db.tableName,
                Item: {
                  ...copy,
                  ...keys.feedEntry(event.shop_id, next.at, next.seq),
                  entity: 'feed_entry',
                  [TABLE.ttlAttribute]: Math.floor(Date.parse(next.at) / 1000) + EVENT_RETENTION_SECONDS,
                },
              },
            },
            {
              Update: {
                TableName: this.db.tableName,
                Key: keys.event(event.shop_id, event.id),
                UpdateExpression: 'SET feed_seq = :n',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(feed_seq)',
                ExpressionAttributeValues: { ':n': next.seq },
              },
            },
          ],
        }),
      );
      return 'appended';
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      if (reasons[2]?.Code === 'ConditionalCheckFailed') return 'present';
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return 'moved';
      throw err;
    }
  }

  async entries(
    shopId: string,
    range: { after?: FeedPosition; from: string },
    max: number,
  ): Promise<{ entries: FeedEntry[]; more: boolean }> {
    const pk = shopPk(shopId);
    const from = `${FEED_PREFIX}${range.from}`;
    const after = range.after ? entrySk(shopId, range.after) : undefined;
    const out = await this.db.doc.query({
      TableName: this.db.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :end',
      ExpressionAttributeValues: { ':pk': pk, ':from': from, ':end': FEED_END },
      // A start key outside the range is refused; a position older than `from` reads from `from`.
      ...(after && after > from ? { ExclusiveStartKey: { pk, sk: after } } : {}),
      ConsistentRead: true,
      Limit: max,
    });
    const entries = (out.Items ?? []).map((item) => {
      const [at = '', seq = '0'] = String(item.sk).slice(FEED_PREFIX.length).split('#');
      return { at, seq: Number(seq), event: eventFromItem(item) };
    });
    return { entries, more: out.LastEvaluatedKey !== undefined };
  }
}
