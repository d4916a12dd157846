/**
 * events.follow(): the event feed as an endless async iterator, for apps that sync by polling.
 * It yields each event once, oldest first, with a cursor to resume from; at the end of the feed it
 * waits pollIntervalMs and asks again from the last next_cursor, until the caller stops iterating
 * or aborts the signal (which ends the iteration quietly, mid-wait or mid-request).
 *
 * The feed gives one cursor per page, after its last event. So the cursor yielded with the last
 * event of a page is exactly after it, and the one yielded with an earlier event is where its page
 * began: resuming there never skips an event, and repeats only events of that page the app has
 * already seen, which it deduplicates on `event.id` (as it does for webhooks). The first
 * request from `since` (or the oldest event) asks for one event, so that every later page begins at
 * a cursor. `limit: 1` makes every cursor exact, at one request per event.
 */
import type { Sleep } from './transport.js';
import type { Event, EventFeed, EventFeedParams, EventTypeName } from './types.js';

type Family = EventTypeName extends `${infer F}.${string}` ? F : never;

/** An event type, or a family of them (`job.*`). */
export type EventTypeFilter = EventTypeName | `${Family}.*`;

export interface FollowParams {
  /** A cursor this iterator yielded, or a feed answer's next_cursor: go on from there. */
  cursor?: string;
  /** Instead of a cursor, an ISO 8601 time within the last 30 days: start at the first event at or after it. */
  since?: string;
  /** Only these types; by default every type the key may read. */
  types?: EventTypeFilter | readonly EventTypeFilter[];
  /** Events per request, 1 to 100 (default 100). */
  limit?: number;
  /** The wait at the end of the feed before asking again. Default 5000. */
  pollIntervalMs?: number;
  /** Ends the iteration, at once, without an error. */
  signal?: AbortSignal;
}

export interface FeedItem {
  event: Event;
  /** Where to resume so that no later event is missed (see above); persist it after handling the event. */
  cursor: string;
}

export type FetchFeedPage = (query: EventFeedParams, signal: AbortSignal | undefined) => Promise<EventFeed>;

export async function* follow(
  fetchPage: FetchFeedPage,
  sleep: Sleep,
  params: FollowParams = {},
): AsyncGenerator<FeedItem, void, undefined> {
  const { since, limit, pollIntervalMs = 5000, signal } = params;
  if (params.cursor !== undefined && since !== undefined)
    throw new TypeError('follow takes a cursor or since, not both');
  const types = typeof params.types === 'string' ? params.types : params.types?.join(',');
  let cursor = params.cursor;
  try {
    for (;;) {
      if (signal?.aborted) return;
      const start = cursor;
      const query = start === undefined ? { since, types, limit: 1 } : { cursor: start, types, limit };
      const page = await fetchPage(query, signal);
      for (const [index, event] of page.data.entries()) {
        if (signal?.aborted) return;
        const last = index === page.data.length - 1;
        // `start` is only undefined on the first page, which holds at most one event: its last.
        yield { event, cursor: last || start === undefined ? page.next_cursor : start };
      }
      cursor = page.next_cursor;
      // With `types` a page may be short, even empty, before the end: only has_more says where the end is.
      if (!page.has_more) await sleep(pollIntervalMs, signal);
    }
  } catch (error) {
    if (signal?.aborted) return;
    throw error;
  }
}
