import { EVENT_RETENTION_SECONDS, type EventRecord } from './events';

/**
 * The event feed (GET /v1/events/feed): each shop's events in one sequence that a client
 * follows with a cursor and that never skips or repeats an event.
 *
 * Event ids and timestamps come from the clocks of the functions that wrote them, which may
 * differ, so neither orders commits. The fan-out appends each event as its stream record
 * arrives: the stream hands a shop's records over in commit order, and each entry is one
 * conditional write at the place after the shop's last entry (`seq` + 1), so two appenders
 * never hold the same place. An entry is written only once the one before it exists, so a
 * reader never finds a gap that is filled later.
 *
 * Each entry also carries `at`: the latest of its event's timestamp, the appender's clock and
 * the entry before it. `at` grows with `seq`, so an event's entry is never earlier than its
 * timestamp (how a retried batch finds what it appended already), an entry appended from now
 * on has an `at` no earlier than now minus the appender's skew (how a reader at the end of the
 * feed moves its cursor forward), and the hour marks find the first entry of a `since` time
 * (./event-feed-reader.ts).
 */

/** A place in a shop's feed: after the entry `seq`, and nothing from before `at`. */
export interface FeedPosition {
  at: string;
  seq: number;
}

/** An entry of a shop's feed: its event's id and type, at its place. */
export interface FeedEntry extends FeedPosition {
  eventId: string;
  type: string;
}

export interface EventFeedStore {
  /** The shop's last entry (strongly consistent), null while its feed is empty. */
  last(shopId: string): Promise<FeedEntry | null>;
  /** The shop's entries whose `at` is `at` or later, newest first. */
  entriesSince(shopId: string, at: string): Promise<FeedEntry[]>;
  /** Writes `entry` unless its place is taken: false when it is. */
  put(shopId: string, entry: FeedEntry): Promise<boolean>;
  /** Marks `entry` as the first of its hour: every entry before it is from an earlier hour. */
  markHour(shopId: string, entry: FeedEntry): Promise<void>;
  /** The place to read from for entries at or after `at`: the latest hour mark at or before it, 0 without one. */
  firstSeqAround(shopId: string, at: string): Promise<number>;
  /** Entries from `fromSeq` on, in feed order; `more` when more followed. */
  entries(shopId: string, fromSeq: number, max: number): Promise<{ entries: FeedEntry[]; more: boolean }>;
  /** The events of these ids that are still kept, by id. */
  events(shopId: string, ids: readonly string[]): Promise<Map<string, EventRecord>>;
}

export interface FeedDeps {
  feed: EventFeedStore;
  now: () => Date;
  /** The appender's memory of each shop's last entry; the readers have none. */
  lastEntries?: LastEntries;
}

/**
 * Each shop's last entry as this process last wrote or read it: where the shop's next append is
 * tried without reading the feed first. Another process may have appended since; the place
 * tried is then taken (places are never freed while a process lives), and the feed is read.
 */
export class LastEntries {
  readonly #byShop = new Map<string, FeedEntry>();

  constructor(private readonly maxShops = 1000) {}

  get(shopId: string): FeedEntry | undefined {
    return this.#byShop.get(shopId);
  }

  set(shopId: string, entry: FeedEntry | null): void {
    this.#byShop.delete(shopId);
    if (!entry) return;
    this.#byShop.set(shopId, entry);
    // The shop remembered longest ago makes room.
    if (this.#byShop.size > this.maxShops) this.#byShop.delete(this.#byShop.keys().next().value as string);
  }
}

export const FEED_RETENTION_MS = EVENT_RETENTION_SECONDS * 1000;

/** The hour of a time (`2026-11-29T08`), which the hour marks are kept by. */
export const hourOf = (at: string): string => at.slice(0, 13);

const latest = (times: string[]): string => times.reduce((a, b) => (a > b ? a : b));

/**
 * How long after a shop's last entry its feed starts over: by then every entry it holds has
 * expired or is about to, and DynamoDB deletes expired items in no particular order.
 */
const START_OVER_AFTER_MS = FEED_RETENTION_MS - 24 * 3_600_000;

/**
 * The entry that follows `last`, appended at `now`. A feed that starts empty, or over after its
 * shop was quiet for the retention, numbers from its event's time in milliseconds: above every
 * place it had before (those entries are a month older, at most one a millisecond), and the same
 * place whichever of the expired entries an appender still finds, and when a retried batch
 * appends that event again.
 */
export function successor(last: FeedEntry | null, event: EventRecord, now: Date): FeedEntry {
  const fresh = !last || Date.parse(event.timestamp) - Date.parse(last.at) > START_OVER_AFTER_MS;
  return {
    at: latest([last?.at ?? '', event.timestamp, now.toISOString()]),
    seq: fresh ? Date.parse(event.timestamp) : last.seq + 1,
    eventId: event.id,
    type: event.type,
  };
}

/** Places an appender may lose in a row while none of its events gets in: others' events keep filling the feed. */
const MAX_PLACES_LOST = 8;

/**
 * How many of `events` (one shop's, in stream order) the feed holds already, and its last
 * entry. An event's entry is no earlier than its timestamp and `at` grows along the feed, so
 * only the entries from the earliest of those timestamps on can hold them: a retried batch,
 * whatever records it brings again, reads back as far as that and no further.
 */
async function appendedSoFar(
  feed: EventFeedStore,
  shopId: string,
  events: readonly EventRecord[],
  remembered?: FeedEntry,
): Promise<{ done: number; last: FeedEntry | null }> {
  const last = remembered ?? (await feed.last(shopId));
  const earliest = events.reduce((t, e) => (e.timestamp < t ? e.timestamp : t), (events[0] as EventRecord).timestamp);
  if (!last || last.at < earliest) return { done: 0, last };
  const ids = new Set((await feed.entriesSince(shopId, earliest)).map((e) => e.eventId));
  return { done: events.findLastIndex((e) => ids.has(e.id)) + 1, last };
}

/**
 * Appends one shop's events in the order given (the stream's) and stops at the first that
 * cannot be appended: it and the ones after it are left for the stream's retry, so the order
 * holds.
 */
export async function appendShopEvents(
  { feed, now, lastEntries }: FeedDeps,
  shopId: string,
  events: readonly EventRecord[],
): Promise<{ stoppedAt: number; error: Error } | null> {
  let done = 0;
  try {
    let { last, done: appended } = await appendedSoFar(feed, shopId, events, lastEntries?.get(shopId));
    done = appended;
    for (let lost = 0; done < events.length;) {
      const next = successor(last, events[done] as EventRecord, now());
      if (!last || hourOf(next.at) > hourOf(last.at)) await feed.markHour(shopId, next);
      if (await feed.put(shopId, next)) {
        last = next;
        done++;
        lastEntries?.set(shopId, next);
        lost = 0;
        continue;
      }
      // Another appender holds that place (the same batch, retried beside this one, or another
      // process since the one remembered): see how far it got.
      ({ last, done: appended } = await appendedSoFar(feed, shopId, events));
      lost = appended > done ? 0 : lost + 1;
      if (lost >= MAX_PLACES_LOST) throw new Error(`the feed of shop ${shopId} kept moving`);
      done = appended;
      lastEntries?.set(shopId, last);
    }
    return null;
  } catch (err) {
    // A write whose answer was lost may have landed: read the feed next time.
    lastEntries?.set(shopId, null);
    return { stoppedAt: done, error: err as Error };
  }
}

/** Appends each shop's events, shops side by side; the events that must come back with the batch, with why. */
export async function appendToFeed(deps: FeedDeps, events: readonly EventRecord[]): Promise<Map<string, Error>> {
  const byShop = new Map<string, EventRecord[]>();
  for (const event of events) byShop.set(event.shop_id, [...(byShop.get(event.shop_id) ?? []), event]);
  const failed = new Map<string, Error>();
  await Promise.all(
    [...byShop].map(async ([shopId, shopEvents]) => {
      const stop = await appendShopEvents(deps, shopId, shopEvents);
      if (!stop) return;
      for (const e of shopEvents.slice(stop.stoppedAt)) failed.set(e.id, stop.error);
    }),
  );
  return failed;
}
