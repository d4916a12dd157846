import type { EventRecord } from '../shared/domain/events';

/** A shop's feed entries in key order: their `seq` and event. */
export type FeedEntries = { seq: number; eventId: string }[];

export const feedEntriesOf = (items: Record<string, unknown>[]): FeedEntries =>
  items
    .filter((i) => i.entity === 'feed_entry')
    .map((i) => ({ seq: Number(String(i.sk).split('#').at(-1)), eventId: String(i.event_id) }));

/**
 * The feed's promise (docs/api.md, The event feed) on a drained run: entries numbered one after
 * the other in key order with no gap, every event in it, none twice.
 */
export function checkFeed(
  feed: FeedEntries,
  events: readonly EventRecord[],
  add: (rule: string, detail: string) => void,
): void {
  feed.forEach((entry, i) => {
    const first = feed[0] as FeedEntries[number];
    if (entry.seq !== first.seq + i) add('feed-order', `entry ${i + 1} of the feed has seq ${entry.seq}`);
  });
  const seen = new Set<string>();
  for (const { eventId } of feed) {
    if (seen.has(eventId)) add('feed-twice', `${eventId} is in the feed twice`);
    seen.add(eventId);
  }
  for (const event of events)
    if (!seen.has(event.id)) add('feed-missing', `${event.type} ${event.id} is not in the feed`);
}
