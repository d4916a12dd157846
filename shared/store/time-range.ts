import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TimeFilter } from '../domain/pagination';
import { idBound, type IdPrefix } from '../ids';

/** The last millisecond a ULID's 48-bit time holds. */
const MAX_TIME_MS = 2 ** 48 - 1;

/**
 * The ids created strictly between a filter's bounds, for a key condition on an id (ids start
 * with their creation time: ../ids.ts). Null when no id can fall between them.
 */
function createdIdRange(prefix: IdPrefix, filter: TimeFilter): { from: string; to: string } | null {
  const first = Math.max(0, (filter.createdAfter ?? -1) + 1);
  const last = Math.min(MAX_TIME_MS, (filter.createdBefore ?? MAX_TIME_MS + 1) - 1);
  if (first > last) return null;
  return { from: idBound(prefix, first, 'first'), to: idBound(prefix, last, 'last') };
}

type KeyQuery = Pick<QueryCommandInput, 'IndexName' | 'KeyConditionExpression' | 'ExpressionAttributeValues'>;

/**
 * The key condition of a list of one kind of item, within a filter's creation bounds: in the
 * shop's partition (`sk` is the prefix and the id) or in a GSI1 list (`gsi1sk` is the id).
 * Null when no item can fall between the bounds.
 */
export function createdKeyQuery(
  where: { pk: string; skPrefix: string } | { gsi1pk: string },
  idPrefix: IdPrefix,
  filter: TimeFilter,
): KeyQuery | null {
  const range = createdIdRange(idPrefix, filter);
  if (!range) return null;
  const bounded = filter.createdAfter !== undefined || filter.createdBefore !== undefined;
  if ('gsi1pk' in where)
    return {
      IndexName: 'gsi1',
      KeyConditionExpression: bounded ? 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to' : 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': where.gsi1pk, ...(bounded ? { ':from': range.from, ':to': range.to } : {}) },
    };
  return {
    KeyConditionExpression: bounded ? 'pk = :pk AND sk BETWEEN :from AND :to' : 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: {
      ':pk': where.pk,
      ...(bounded
        ? { ':from': `${where.skPrefix}${range.from}`, ':to': `${where.skPrefix}${range.to}` }
        : { ':prefix': where.skPrefix }),
    },
  };
}
