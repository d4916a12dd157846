import type { ApiKeyRecord } from '../domain/api-keys';
import type { Shop } from '../domain/shop';
import type { Dynamo } from './client';
import { stripKeys } from './client';

/**
 * Operator listings (the CLI and the local banner), not request paths: no API operation
 * lists shops or a shop's keys, so these read the table with a filtered Scan rather than
 * paying for an index on every write. Fine for an operator on a local or small table.
 */
async function scanEntity<T>(db: Dynamo, entity: string, shopId?: string): Promise<T[]> {
  const items: T[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.scan({
      TableName: db.tableName,
      FilterExpression: shopId ? '#entity = :entity AND shop_id = :shop' : '#entity = :entity',
      ExpressionAttributeNames: { '#entity': 'entity' },
      ExpressionAttributeValues: { ':entity': entity, ...(shopId ? { ':shop': shopId } : {}) },
      ExclusiveStartKey: start,
    });
    items.push(...(out.Items ?? []).map((item) => stripKeys<T>(item)));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every shop, oldest first (ids are time-ordered). */
export async function scanShops(db: Dynamo): Promise<Shop[]> {
  return (await scanEntity<Shop>(db, 'shop')).sort((a, b) => a.id.localeCompare(b.id));
}

/** A shop's API keys (hashes only; the clear key is never stored), oldest first. */
export async function scanShopKeys(db: Dynamo, shopId: string): Promise<ApiKeyRecord[]> {
  return (await scanEntity<ApiKeyRecord>(db, 'api_key', shopId)).sort((a, b) => a.id.localeCompare(b.id));
}
