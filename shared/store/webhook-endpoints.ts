import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FailureStateStore } from '../domain/delivery-attempt';
import type { EventRecord } from '../domain/events';
import type { EndpointChanges, EndpointRecord, EndpointStore, StoredSecret } from '../domain/webhook-endpoints';
import { eventItem } from './events';
import { getRecord, queryPrefix, stripKeys, type Dynamo } from './client';
import { keys, shopPk, skPrefix } from './keys';

export class DynamoEndpointStore implements EndpointStore, FailureStateStore {
  constructor(private readonly db: Dynamo) {}

  /** The shop item counts its endpoints, so concurrent creates cannot pass the limit. */
  async create(endpoint: EndpointRecord, maxPerShop: number) {
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.db.tableName,
                Key: keys.shop(endpoint.shop_id),
                UpdateExpression: 'SET webhook_endpoint_count = if_not_exists(webhook_endpoint_count, :zero) + :one',
                ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(webhook_endpoint_count) OR webhook_endpoint_count < :max)',
                ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': maxPerShop },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              Put: {
                TableName: this.db.tableName,
                Item: { ...keys.webhookEndpoint(endpoint.shop_id, endpoint.id), entity: 'webhook_endpoint', ...endpoint },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return 'created' as const;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const shopReason = err.CancellationReasons?.[0];
      if (shopReason?.Code !== 'ConditionalCheckFailed') throw err;
      return shopReason.Item ? ('limit_reached' as const) : ('shop_missing' as const);
    }
  }

  async list(shopId: string): Promise<EndpointRecord[]> {
    const items = await queryPrefix(this.db, shopPk(shopId), skPrefix.webhookEndpoint, { newestFirst: true });
    return items.map((i) => stripKeys<EndpointRecord>(i));
  }

  async get(shopId: string, id: string): Promise<EndpointRecord | null> {
    return getRecord<EndpointRecord>(this.db, keys.webhookEndpoint(shopId, id));
  }

  private async conditionalUpdate(shopId: string, id: string, sets: Record<string, unknown>, condition: string, values: Record<string, unknown> = {}) {
    const names = Object.fromEntries(Object.keys(sets).map((k) => [`#${k}`, k]));
    const setValues = Object.fromEntries(Object.entries(sets).map(([k, v]) => [`:${k}`, v]));
    try {
      const out = await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: keys.webhookEndpoint(shopId, id),
          UpdateExpression: `SET ${Object.keys(sets).map((k) => `#${k} = :${k}`).join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...setValues, ...values },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes ? stripKeys<EndpointRecord>(out.Attributes) : null;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return null;
      throw err;
    }
  }

  update(shopId: string, id: string, changes: EndpointChanges, updatedAt: string) {
    return this.conditionalUpdate(shopId, id, { ...changes, updated_at: updatedAt }, 'attribute_exists(pk)');
  }

  replaceSecrets(endpoint: EndpointRecord, secrets: StoredSecret[], expectedVersion: number, updatedAt: string) {
    return this.conditionalUpdate(
      endpoint.shop_id,
      endpoint.id,
      { secrets, secrets_version: expectedVersion + 1, updated_at: updatedAt },
      'attribute_exists(pk) AND secrets_version = :expected',
      { ':expected': expectedVersion },
    );
  }

  /** Set at the first failure after a success; a concurrent first failure keeps the earlier time. */
  async markFailing(endpoint: EndpointRecord, since: string): Promise<void> {
    await this.conditionalUpdate(endpoint.shop_id, endpoint.id, { failing_since: since }, 'attribute_exists(pk) AND attribute_type(failing_since, :nullType)', {
      ':nullType': 'NULL',
    });
  }

  async clearFailing(endpoint: EndpointRecord): Promise<void> {
    await this.conditionalUpdate(endpoint.shop_id, endpoint.id, { failing_since: null }, 'attribute_exists(pk)');
  }

  async disable(endpoint: EndpointRecord, reason: 'failing' | 'gone', lastErrors: string[], event: EventRecord, at: string): Promise<boolean> {
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.db.tableName,
                Key: keys.webhookEndpoint(endpoint.shop_id, endpoint.id),
                UpdateExpression: 'SET enabled = :false, disabled_reason = :reason, last_errors = :errors, updated_at = :at',
                ConditionExpression: 'enabled = :true',
                ExpressionAttributeValues: { ':false': false, ':true': true, ':reason': reason, ':errors': lastErrors, ':at': at },
              },
            },
            { Put: { TableName: this.db.tableName, Item: eventItem(event), ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof TransactionCanceledException) return false;
      throw err;
    }
  }
}
