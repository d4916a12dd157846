import * as z from 'zod/mini';

const LIMIT_MESSAGE = 'limit must be an integer between 1 and 100';

/** `limit` (1..100, default 20) and `cursor`, the query of every list. Query values arrive as strings. */
export const pageQuery = {
  limit: z.optional(
    z.pipe(
      z.pipe(z.string().check(z.regex(/^\d{1,3}$/, LIMIT_MESSAGE)), z.transform(Number)),
      z.number().check(z.int(), z.minimum(1, LIMIT_MESSAGE), z.maximum(100, LIMIT_MESSAGE)),
    ),
  ),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
};

const TIME_MESSAGE = 'must be a timestamp with its offset, such as 2026-11-24T14:00:00Z';
const timestamp = z.optional(
  z.pipe(
    z.iso.datetime({ offset: true, message: TIME_MESSAGE }),
    z.transform((value) => Date.parse(value)),
  ),
);

/** `created_after` and `created_before` (exclusive), on the lists of calls, jobs and events. */
export const createdQuery = { created_after: timestamp, created_before: timestamp };
/** `updated_after` (exclusive), on the list of jobs. */
export const updatedQuery = { updated_after: timestamp };

/** The time filter of a list's query, as the stores take it. */
export const timeFilterOf = (query: { created_after?: number; created_before?: number; updated_after?: number }) => ({
  createdAfter: query.created_after,
  createdBefore: query.created_before,
  updatedAfter: query.updated_after,
});

/** The part of a cursor's scope that names the filters: a cursor made under others is refused. */
export const timeScopeOf = (query: { created_after?: number; created_before?: number; updated_after?: number }) =>
  `created_after=${query.created_after ?? ''}&created_before=${query.created_before ?? ''}` +
  `&updated_after=${query.updated_after ?? ''}`;
