/**
 * Which table stream records reach the fan-out: new event items, delivery rows that
 * redeliver and recover inserted, every write of a recovery still running (each one
 * wakes the worker for its next page), and raises of an endpoint's rate limit. CDK puts these in
 * the event source's FilterCriteria;
 * the local stream poller applies the same patterns with `matchesFilter`.
 */
export const FANOUT_FILTER_PATTERNS = [
  { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['event'] } } } },
  { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['delivery'] }, origin: { S: ['redeliver'] } } } },
  {
    eventName: ['INSERT', 'MODIFY'],
    dynamodb: { NewImage: { entity: { S: ['recovery'] }, status: { S: ['running'] } } },
  },
  { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['rate_raise'] } } } },
] as const;

type Pattern = { readonly [key: string]: Pattern | readonly string[] };

/** The subset of Lambda event filtering these patterns use: nested keys, each leaf a list of exact values. */
export function matchesFilter(record: unknown, pattern: Pattern): boolean {
  if (record === null || typeof record !== 'object') return false;
  return Object.entries(pattern).every(([key, want]) => {
    const value = (record as Record<string, unknown>)[key];
    if (Array.isArray(want)) return want.includes(value as string);
    return matchesFilter(value, want as Pattern);
  });
}

export const passesFanoutFilter = (record: unknown): boolean =>
  FANOUT_FILTER_PATTERNS.some((p) => matchesFilter(record, p as Pattern));
