import type { FeedPosition } from '../domain/event-feed';
import { AppError } from '../errors';
import { decodeCursor, encodeCursor, type CursorScope } from './cursor';

/** A feed cursor: a position in one shop's feed, signed like every list cursor (./cursor.ts). */
const scopeOf = (shopId: string): CursorScope => ({ shopId, list: 'events/feed' });

export const encodeFeedCursor = (position: FeedPosition, shopId: string, key: Buffer): string =>
  encodeCursor(scopeOf(shopId), { a: position.at, n: position.seq }, key);

/** The position a cursor holds; anything this feed did not issue is a 400 naming `cursor`. */
export function decodeFeedCursor(cursor: string, shopId: string, key: Buffer): FeedPosition {
  const invalid = new AppError(
    'parameter_invalid',
    'cursor is not a next_cursor of this feed; start again without it, or with since.',
    { param: 'cursor' },
  );
  let position: Record<string, unknown>;
  try {
    position = decodeCursor(cursor, scopeOf(shopId), key);
  } catch {
    throw invalid;
  }
  const { a, n } = position;
  if (typeof a !== 'string' || Number.isNaN(Date.parse(a)) || !Number.isSafeInteger(n) || (n as number) < 0)
    throw invalid;
  return { at: a, seq: n as number };
}
