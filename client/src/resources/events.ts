import { type FeedItem, follow, type FollowParams } from '../feed.js';
import { type Http, pageQuery, unwrap, wholeList } from '../http.js';
import { ListPromise } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type {
  Event,
  EventFeed,
  EventFeedParams,
  EventList,
  EventType,
  EventTypeList,
  EventWithDeliveries,
  ListEventsParams,
  RedeliverEventParams,
} from '../types.js';

/** `/v1/events`: the last 30 days of the shop's events and their deliveries. */
export class Events {
  constructor(private readonly http: Http) {}

  /** Newest first; by `type`, or by time with `created_after` and `created_before`. */
  list(params: ListEventsParams = {}, options?: RequestOptions): ListPromise<Event, EventList> {
    return new ListPromise((cursor) =>
      unwrap(
        this.http.api.GET('/v1/events', { params: { query: pageQuery(params, cursor) }, ...this.http.via(options) }),
      ),
    );
  }

  /** The event and every delivery of it. */
  retrieve(id: string, options?: RequestOptions): Promise<EventWithDeliveries> {
    return unwrap(this.http.api.GET('/v1/events/{id}', { params: { path: { id } }, ...this.http.via(options) }));
  }

  /**
   * One page of the event feed, oldest first: from `cursor`, or `since` a time, or the oldest event.
   * `next_cursor` is always there; `has_more: false` means the end, for now.
   */
  feed(params: EventFeedParams = {}, options?: RequestOptions): Promise<EventFeed> {
    return unwrap(this.http.api.GET('/v1/events/feed', { params: { query: params }, ...this.http.via(options) }));
  }

  /**
   * Every event from a cursor (or `since`, or the oldest) on, each once with a cursor to resume from,
   * waiting `pollIntervalMs` at the end of the feed and asking again, until `signal` aborts. A 410
   * (InvalidRequestError, code `cursor_expired`) means the cursor is past the 30 days: restart with `since`.
   */
  follow(params: FollowParams = {}): AsyncGenerator<FeedItem, void, undefined> {
    const fetchPage = (query: EventFeedParams, signal: AbortSignal | undefined) => this.feed(query, { signal });
    return follow(fetchPage, this.http.config.sleep, params);
  }

  /** To the endpoints named, or every enabled endpoint subscribed to its type. Not retried once sent. */
  redeliver(id: string, params: RedeliverEventParams = {}, options?: RequestOptions): Promise<EventWithDeliveries> {
    const init = { params: { path: { id } }, body: params, ...this.http.via(options) };
    return unwrap(this.http.api.POST('/v1/events/{id}/redeliver', init));
  }
}

/** `/v1/event-types`: what each type means, its JSON Schema and an example (any valid key). */
export class EventTypes {
  constructor(private readonly http: Http) {}

  list(options?: RequestOptions): ListPromise<EventType, EventTypeList> {
    return new ListPromise(wholeList(() => unwrap(this.http.api.GET('/v1/event-types', this.http.via(options)))));
  }
}
