import type { Page } from '../domain/pagination';
import { decodeCursor, encodeCursor, loadCursorSecret, type CursorScope } from './cursor';

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
