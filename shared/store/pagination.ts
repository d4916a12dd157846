import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Page, PageRequest } from '../domain/pagination';
import type { Dynamo } from './client';
import { TABLE } from './table';

const KEY_ATTRIBUTES = [
  TABLE.partitionKey,
  TABLE.sortKey,
  ...TABLE.globalIndexes.flatMap((g) => [g.partitionKey, g.sortKey]),
];

/** The item's position, usable as ExclusiveStartKey on the table or an index. */
function positionOf(item: Record<string, unknown>, indexName?: string): Record<string, unknown> {
  const index = TABLE.globalIndexes.find((g) => g.name === indexName);
  const wanted = index
    ? [TABLE.partitionKey, TABLE.sortKey, index.partitionKey, index.sortKey]
    : [TABLE.partitionKey, TABLE.sortKey];
  return Object.fromEntries(wanted.filter((k) => KEY_ATTRIBUTES.includes(k)).map((k) => [k, item[k]]));
}

/**
 * One page of a Query. Asks for limit + 1 items so `next` is absent exactly on the last
 * page, and keeps reading when DynamoDB stops early at its 1 MB response limit.
 */
export async function queryPage(
  db: Dynamo,
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  page: PageRequest,
): Promise<Page<Record<string, unknown>>> {
  const items: Record<string, unknown>[] = [];
  let start = page.after;
  do {
    const out = await db.doc.query({
      ...input,
      TableName: db.tableName,
      Limit: page.limit + 1 - items.length,
      ExclusiveStartKey: start,
    });
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length <= page.limit);
  const pageItems = items.slice(0, page.limit);
  const last = pageItems[pageItems.length - 1];
  return { items: pageItems, next: items.length > page.limit && last ? positionOf(last, input.IndexName) : undefined };
}

/**
 * One page of a Query whose FilterExpression may reject most items: reads at most
 * `maxEvaluated` items, so a rare match never costs a scan of the whole partition. When the
 * budget runs out first the page may hold fewer than `limit` items (even none) and `next`
 * resumes after the last item read.
 */
export async function queryFilteredPage(
  db: Dynamo,
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  page: PageRequest,
  maxEvaluated: number,
): Promise<Page<Record<string, unknown>>> {
  const items: Record<string, unknown>[] = [];
  let start = page.after;
  let evaluated = 0;
  do {
    const out = await db.doc.query({
      ...input,
      TableName: db.tableName,
      Limit: maxEvaluated - evaluated,
      ExclusiveStartKey: start,
    });
    evaluated += out.ScannedCount ?? 0;
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length <= page.limit && evaluated < maxEvaluated);
  const pageItems = items.slice(0, page.limit);
  const last = pageItems[pageItems.length - 1];
  if (items.length > page.limit && last) return { items: pageItems, next: positionOf(last, input.IndexName) };
  return { items: pageItems, next: start };
}
