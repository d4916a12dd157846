import type { Shop, ShopChanges, ShopStore } from '../domain/shop';
import type { Dynamo } from './client';
import { getRecord, isConditionFailed, stripKeys } from './client';
import { keys } from './keys';

export class DynamoShopStore implements ShopStore {
  constructor(private readonly db: Dynamo) {}

  async get(shopId: string): Promise<Shop | null> {
    return getRecord<Shop>(this.db, keys.shop(shopId));
  }

  async create(shop: Shop): Promise<void> {
    await this.db.doc.put({
      TableName: this.db.tableName,
      Item: { ...keys.shop(shop.id), entity: 'shop', ...shop },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  }

  /** One UpdateItem: whole fields are SET, hours are SET day by day so other days are kept. */
  async update(shopId: string, changes: ShopChanges, updatedAt: string): Promise<Shop | null> {
    const names: Record<string, string> = { '#updated_at': 'updated_at' };
    const values: Record<string, unknown> = { ':updated_at': updatedAt };
    const sets = ['#updated_at = :updated_at'];
    for (const [field, value] of Object.entries(changes.fields)) {
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    if (Object.keys(changes.hours).length > 0) names['#hours'] = 'hours';
    for (const [day, intervals] of Object.entries(changes.hours)) {
      names[`#h_${day}`] = day;
      values[`:h_${day}`] = intervals;
      sets.push(`#hours.#h_${day} = :h_${day}`);
    }
    try {
      const out = await this.db.doc.update({
        TableName: this.db.tableName,
        Key: keys.shop(shopId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      });
      return out.Attributes ? stripKeys<Shop>(out.Attributes) : null;
    } catch (err) {
      if (isConditionFailed(err)) return null;
      throw err;
    }
  }
}
