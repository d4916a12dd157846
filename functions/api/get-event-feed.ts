import { readFeed, feedTypes, type FeedStart } from '../../shared/domain/event-feed-reader';
import type { FeedDeps } from '../../shared/domain/event-feed';
import { eventFeedQuery } from '../../shared/domain/event-feed-schema';
import { toEventResource } from '../../shared/domain/events';
import { AppError } from '../../shared/errors';
import { apiHandler } from '../../shared/http/handler';
import { decodeFeedCursor, encodeFeedCursor } from '../../shared/http/feed-cursor';
import type { CursorDeps } from '../../shared/http/list';
import { requestSchemas } from '../../shared/http/validation';
import { cursorDeps, eventFeedDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ query: eventFeedQuery });

export const makeHandler = (deps: () => FeedDeps & CursorDeps = lambdaDeps(eventFeedDeps, cursorDeps)) =>
  apiHandler('getEventFeed', spec, async ({ principal, query }) => {
    if (query.cursor !== undefined && query.since !== undefined) {
      throw new AppError('parameter_invalid', 'Pass cursor or since, not both.', { param: 'since' });
    }
    const types = feedTypes(principal.scopes, query.types);
    const key = await deps().cursorKey();
    const start: FeedStart = query.cursor
      ? { after: decodeFeedCursor(query.cursor, principal.shopId, key) }
      : query.since
        ? { since: query.since }
        : 'oldest';
    const page = await readFeed(deps(), principal.shopId, { start, limit: query.limit ?? 100, types });
    return {
      status: 200,
      body: {
        object: 'event_feed',
        data: page.events.map(toEventResource),
        next_cursor: encodeFeedCursor(page.next, principal.shopId, key),
        has_more: page.hasMore,
      },
    };
  });

export const handler = makeHandler();
