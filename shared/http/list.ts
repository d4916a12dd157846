import type { Page } from '../domain/pagination';
import { decodeCursor, encodeCursor, type CursorScope } from './cursor';

/** What a list operation's handler needs besides its domain's ports: the HMAC key of its cursors. */
export interface CursorDeps {
  /** Loaded on first use (Secrets Manager in AWS), so only list operations hold the key. */
  cursorKey(): Promise<Buffer>;
}

export function pageRequest(query: { limit?: number; cursor?: string }, scope: CursorScope, key: Buffer) {
  return { limit: query.limit ?? 20, after: query.cursor ? decodeCursor(query.cursor, scope, key) : undefined };
}

/** The contract's list envelope. */
export function listBody<T>(page: Page<T>, scope: CursorScope, key: Buffer) {
  return {
    object: 'list' as const,
    data: page.items,
    has_more: page.next !== undefined,
    next_cursor: page.next ? encodeCursor(scope, page.next, key) : null,
  };
}
