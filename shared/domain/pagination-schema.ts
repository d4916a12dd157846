import * as z from 'zod';

const LIMIT_MESSAGE = 'limit must be an integer between 1 and 100';

/** `limit` (1..100, default 20) and `cursor`, the query of every list. Query values arrive as strings. */
export const pageQuery = {
  limit: z
    .string()
    .regex(/^\d{1,3}$/, LIMIT_MESSAGE)
    .transform(Number)
    .pipe(z.number().int().min(1, LIMIT_MESSAGE).max(100, LIMIT_MESSAGE))
    .optional(),
  cursor: z.string().min(1).max(4096).optional(),
};
