import * as z from 'zod/mini';
import { isFeedTypeName } from './event-feed-reader';
import { pageQuery } from './pagination-schema';

const LIMIT_MESSAGE = 'limit must be an integer between 1 and 100';
const TYPES_MESSAGE = 'types must be event types or families such as job.*, separated by commas';

/** The query of GET /v1/events/feed: where to start (`cursor` or `since`), `limit` and `types`. */
export const eventFeedQuery = z.strictObject({
  cursor: pageQuery.cursor,
  since: z.optional(
    z.pipe(
      z.iso.datetime({ offset: true, message: 'must be a timestamp with its offset, such as 2026-11-24T14:00:00Z' }),
      z.transform((value) => new Date(value)),
    ),
  ),
  limit: z.optional(
    z.pipe(
      z.pipe(z.string().check(z.regex(/^\d{1,3}$/, LIMIT_MESSAGE)), z.transform(Number)),
      z.number().check(z.int(), z.minimum(1, LIMIT_MESSAGE), z.maximum(100, LIMIT_MESSAGE)),
    ),
  ),
  types: z.optional(
    z.pipe(
      z.string().check(
        z.maxLength(1000),
        z.refine((value) => value.split(',').every(isFeedTypeName), TYPES_MESSAGE),
      ),
      z.transform((value) => [...new Set(value.split(','))]),
    ),
  ),
});
