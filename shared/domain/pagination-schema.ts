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
