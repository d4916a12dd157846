import { hourOf, type EventFeedStore, type FeedEntry } from '../domain/event-feed';
import { EVENT_RETENTION_SECONDS, type EventRecord } from '../domain/events';
import { batchGet, isConditionFailed, retryConflicts, type Dynamo } from './client';
import { eventFromItem } from './events';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';

/** Above every entry's key. */
const FEED_END = `${skPrefix.feed}~`;
const HOUR_MS = 3_600_000;
const expiresAfter = (ms: number) => Math.floor(ms / 1000) + EVENT_RETENTION_SECONDS;

const entryOf = (item: Record<string, unknown>): FeedEntry => ({
  at: String(item.at),
  seq: Number(String(item.sk).slice(skPrefix.feed.length)),
  eventId: String(item.event_id),
  type: String(item.type),
});

/**
 * The feed in the shop's partition: one small entry per event (`FEED#<seq>`: its id, type and
 * `at`, expiring with it), the events themselves read from their own items; and one mark per
 * hour with entries (`FEEDHOUR#<hour>`: the first entry's `seq`), which finds where a `since`
 * time starts without reading the hours before it.
 */
export class DynamoEventFeed implements EventFeedStore {
  constructor(private readonly db: Dynamo) {}

  /** One page of the shop's entries, newest first. */
  private newestFirst(shopId: string, limit: number, startKey?: Record<string, unknown>) {
    return this.db.doc.query({
      TableName: this.db.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :end',
      ExpressionAttributeValues: { ':pk': shopPk(shopId), ':from': skPrefix.feed, ':end': FEED_END },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
  }

  async last(shopId: string): Promise<FeedEntry | null> {
    const item = (await this.newestFirst(shopId, 1)).Items?.[0];
    return item ? entryOf(item) : null;
  }

  async entriesSince(shopId: string, at: string): Promise<FeedEntry[]> {
    const found: FeedEntry[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.newestFirst(shopId, 100, startKey);
      for (const item of out.Items ?? []) {
        const entry = entryOf(item);
        // `at` grows along the feed: the first one older than `at` ends the search.
        if (entry.at < at) return found;
        found.push(entry);
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return found;
  }

  async put(shopId: string, entry: FeedEntry): Promise<boolean> {
    try {
      await retryConflicts(() =>
        this.db.doc.put({
          TableName: this.db.tableName,
          Item: {
            ...keys.feedEntry(shopId, entry.seq),
            entity: 'feed_entry',
            at: entry.at,
            event_id: entry.eventId,
            type: entry.type,
            [TABLE.ttlAttribute]: expiresAfter(Date.parse(entry.at)),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
  }

  async markHour(shopId: string, entry: FeedEntry): Promise<void> {
    const hour = hourOf(entry.at);
    // Kept as long as any entry of its hour.
    const hourEnd = Date.parse(`${hour}:00:00.000Z`) + HOUR_MS;
    await this.db.doc.put({
      TableName: this.db.tableName,
      Item: {
        ...keys.feedHour(shopId, hour),
        entity: 'feed_hour',
        seq: entry.seq,
        [TABLE.ttlAttribute]: expiresAfter(hourEnd),
      },
    });
  }

  async firstSeqAround(shopId: string, at: string): Promise<number> {
    const out = await this.db.doc.query({
      TableName: this.db.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': shopPk(shopId),
        ':from': skPrefix.feedHour,
        ':to': keys.feedHour(shopId, hourOf(at)).sk,
      },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: 1,
    });
    return Number(out.Items?.[0]?.seq ?? 0);
  }

  async entries(shopId: string, fromSeq: number, max: number): Promise<{ entries: FeedEntry[]; more: boolean }> {
    const out = await this.db.doc.query({
      TableName: this.db.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :end',
      ExpressionAttributeValues: {
        ':pk': shopPk(shopId),
        ':from': keys.feedEntry(shopId, fromSeq).sk,
        ':end': FEED_END,
      },
      ConsistentRead: true,
      Limit: max,
    });
    return { entries: (out.Items ?? []).map(entryOf), more: out.LastEvaluatedKey !== undefined };
  }

  async events(shopId: string, ids: readonly string[]): Promise<Map<string, EventRecord>> {
    const items = await batchGet(
      this.db,
      ids.map((id) => keys.event(shopId, id)),
    );
    return new Map([...items.values()].map((item) => [String(item.id), eventFromItem(item)]));
  }
}
