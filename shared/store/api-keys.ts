import type { ApiKeyRecord, ApiKeyStore } from '../domain/api-keys';
import type { Dynamo } from './client';
import { getRecord, isConditionFailed, stripKeys } from './client';
import { keys } from './keys';

export class DynamoApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Dynamo) {}

  async put(record: ApiKeyRecord): Promise<void> {
    await this.db.doc.put({
      TableName: this.db.tableName,
      Item: { ...keys.apiKey(record.key_hash), ...keys.apiKeyById(record.id), entity: 'api_key', ...record },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  }

  async getByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    // Strongly consistent, so a revocation takes effect on the next authorizer run.
    return getRecord<ApiKeyRecord>(this.db, keys.apiKey(keyHash));
  }

  async revoke(keyId: string, at: string): Promise<ApiKeyRecord | null> {
    const item = await this.itemById(keyId);
    if (!item) return null;
    try {
      const out = await this.db.doc.update({
        TableName: this.db.tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET revoked = :true, revoked_at = :at',
        // Revoking twice keeps the first revocation time.
        ConditionExpression: 'revoked = :false',
        ExpressionAttributeValues: { ':true': true, ':false': false, ':at': at },
        ReturnValues: 'ALL_NEW',
      });
      return stripKeys<ApiKeyRecord>(out.Attributes ?? item);
    } catch (err) {
      if (isConditionFailed(err)) return stripKeys<ApiKeyRecord>(item);
      throw err;
    }
  }

  /** The key's item found by its id in GSI1 (an index: eventually consistent). */
  private async itemById(keyId: string): Promise<Record<string, unknown> | undefined> {
    const { gsi1pk, gsi1sk } = keys.apiKeyById(keyId);
    const found = await this.db.doc.query({
      TableName: this.db.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': gsi1pk, ':sk': gsi1sk },
    });
    return found.Items?.[0];
  }
}
