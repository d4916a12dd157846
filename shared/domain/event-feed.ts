import { EVENT_RETENTION_SECONDS, type EventRecord } from './events';

/**
 * The event feed (GET /v1/events/feed): each shop's events in one sequence that a client
 * follows with a cursor and that never skips or repeats an event.
 *
 * Event ids and timestamps come from the clocks of the functions that wrote them, which may
 * differ, so neither orders commits. The fan-out appends each event as its stream record
 * arrives: the stream hands a shop's records over in commit order, and one transaction writes
 * the entry `n + 1`, moves the shop's head from `n` to `n + 1` and marks the event as appended.
 * An entry exists only once the head has moved past it, so a reader never finds a gap that is
 * filled later; a retried stream batch finds its events marked and appends nothing twice.
 *
 * Each entry also carries `at`: the latest of its event's timestamp, the appender's clock and
 * the entry before it. Entries sort by `at` then `n`, which is the order of `n`, so a `since`
 * time is one key range holding every event whose timestamp is at or after it; and an entry
 * appended from now on has an `at` no earlier than now minus the appender's skew, which lets
 * a reader at the end of the feed move its cursor forward (./event-feed-reader.ts).
 */

/** A place in a shop's feed: after the entry `at`/`seq` (`seq` 0: before every entry at `at`). */
export interface FeedPosition {
  at: string;
  seq: number;
}

/** The last entry of a shop's feed. */
export type FeedHead = FeedPosition;

export interface FeedEntry extends FeedPosition {
  event: EventRecord;
}

export type AppendOutcome =
  /** Appended as `head`'s successor. */
  | 'appended'
  /** Already in the feed (a retried stream batch), or expired. */
  | 'present'
  /** Another writer moved the head first: read it again. */
  | 'moved';

export interface EventFeedStore {
  head(shopId: string): Promise<FeedHead | null>;
  /** Writes `next` (the successor of `head`, null for the first entry) if the head is still `head`. */
  append(event: EventRecord, head: FeedHead | null, next: FeedEntry): Promise<AppendOutcome>;
  /** Entries after `after` (or from the first at or after `from`), in feed order; `more` when more followed. */
  entries(
    shopId: string,
    range: { after?: FeedPosition; from: string },
    max: number,
  ): Promise<{ entries: FeedEntry[]; more: boolean }>;
}

export interface FeedDeps {
  feed: EventFeedStore;
  now: () => Date;
}

export const FEED_RETENTION_MS = EVENT_RETENTION_SECONDS * 1000;

const latest = (times: string[]): string => times.reduce((a, b) => (a > b ? a : b));

/** The entry that follows `head`, appended at `now`. */
export function successor(head: FeedHead | null, event: EventRecord, now: Date): FeedEntry {
  return { at: latest([head?.at ?? '', event.timestamp, now.toISOString()]), seq: (head?.seq ?? 0) + 1, event };
}

const MAX_APPEND_TRIES = 8;

/**
 * Appends a shop's events in the order given (the stream's) and stops at the first that cannot
 * be appended: it and the ones after it are left for the stream's retry, so the order holds.
 */
export async function appendShopEvents(
  { feed, now }: FeedDeps,
  events: readonly EventRecord[],
): Promise<{ stoppedAt: number; error: Error } | null> {
  let head: FeedHead | null | undefined;
  for (const [index, event] of events.entries()) {
    try {
      let outcome: AppendOutcome = 'moved';
      for (let tries = 0; outcome === 'moved' && tries < MAX_APPEND_TRIES; tries++) {
        if (head === undefined || tries > 0) head = await feed.head(event.shop_id);
        const next = successor(head, event, now());
        outcome = await feed.append(event, head, next);
        if (outcome === 'appended') head = next;
        // Someone else appended it: the head has moved too.
        if (outcome === 'present') head = undefined;
      }
      if (outcome === 'moved') throw new Error(`the feed's head of shop ${event.shop_id} kept moving`);
    } catch (err) {
      return { stoppedAt: index, error: err as Error };
    }
  }
  return null;
}

/** Appends each shop's events, shops side by side; the events that must come back with the batch, with why. */
export async function appendToFeed(deps: FeedDeps, events: readonly EventRecord[]): Promise<Map<string, Error>> {
  const byShop = new Map<string, EventRecord[]>();
  for (const event of events) byShop.set(event.shop_id, [...(byShop.get(event.shop_id) ?? []), event]);
  const failed = new Map<string, Error>();
  await Promise.all(
    [...byShop.values()].map(async (shopEvents) => {
      const stop = await appendShopEvents(deps, shopEvents);
      if (!stop) return;
      for (const e of shopEvents.slice(stop.stoppedAt)) failed.set(e.id, stop.error);
    }),
  );
  return failed;
}
