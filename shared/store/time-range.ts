import type { TimeFilter } from '../domain/pagination';
import { idBound, type IdPrefix } from '../ids';

/** The last millisecond a ULID's 48-bit time holds. */
const MAX_TIME_MS = 2 ** 48 - 1;

/**
 * The ids created strictly between a filter's bounds, for a key condition on an id (ids start
 * with their creation time: ../ids.ts). Null when no id can fall between them.
 */
export function createdIdRange(prefix: IdPrefix, filter: TimeFilter): { from: string; to: string } | null {
  const first = Math.max(0, (filter.createdAfter ?? -1) + 1);
  const last = Math.min(MAX_TIME_MS, (filter.createdBefore ?? MAX_TIME_MS + 1) - 1);
  if (first > last) return null;
  return { from: idBound(prefix, first, 'first'), to: idBound(prefix, last, 'last') };
}

export const hasCreatedBounds = (filter: TimeFilter): boolean =>
  filter.createdAfter !== undefined || filter.createdBefore !== undefined;
