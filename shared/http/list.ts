import * as z from 'zod';
import type { Page } from '../domain/pagination';
import { decodeCursor, encodeCursor, loadCursorSecret, type CursorScope } from './cursor';

const LIMIT_MESSAGE = 'limit must be an integer between 1 and 100';

/** `limit` (1..100, default 20) and `cursor`, shared by every list. Query values arrive as strings. */
export const pageQuery = {
  limit: z
    .string()
    .regex(/^\d{1,3}$/, LIMIT_MESSAGE)
    .transform(Number)
    .pipe(z.number().int().min(1, LIMIT_MESSAGE).max(100, LIMIT_MESSAGE))
    .optional(),
  cursor: z.string().min(1).max(4096).optional(),
};

/** Loads the cursor key on first use (Secrets Manager in AWS), so only list operations bundle that client. */
export async function pageRequest(query: { limit?: number; cursor?: string }, scope: CursorScope) {
  await loadCursorSecret();
  return { limit: query.limit ?? 20, after: query.cursor ? decodeCursor(query.cursor, scope) : undefined };
}

/** The contract's list envelope. */
export function listBody<T>(page: Page<T>, scope: CursorScope) {
  return {
    object: 'list' as const,
    data: page.items,
    has_more: page.next !== undefined,
    next_cursor: page.next ? encodeCursor(scope, page.next) : null,
  };
}
