import type { EventFilter } from '../domain/event-filter-schema';
import type { EndpointChanges, EndpointRecord, EndpointStore, StoredSecret } from '../domain/webhook-endpoints';
import { EVENT_RETENTION_SECONDS } from '../domain/events';
import { batchGet, cancellationReasons, isConditionFailed, queryPrefix } from './client';
import { DynamoEndpointGateStore, endpointFromItem } from './endpoint-gate';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';

/**
 * The filter as stored: its JSON text, not a map. A map would come back with numbers as
 * DynamoDB keeps them (one over 2^53 cannot be read back at all, which would make the
 * endpoint unreadable), and nothing ever reads into it: it is written and read whole.
 */
const filterAttribute = (filter: EventFilter | null | undefined): string | null => (filter ? JSON.stringify(filter) : null);

/** The API's reads and writes of endpoints (create, list, update, rotate, delete), with the consumer's gate beneath. */
export class DynamoEndpointStore extends DynamoEndpointGateStore implements EndpointStore {
  /** The shop item counts its endpoints, so concurrent creates cannot pass the limit. */
  async create(endpoint: EndpointRecord, maxPerShop: number) {
    try {
      await this.db.doc.transactWrite({
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
              Item: { ...keys.webhookEndpoint(endpoint.shop_id, endpoint.id), entity: 'webhook_endpoint', ...endpoint, filter: filterAttribute(endpoint.filter) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      });
      return 'created' as const;
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const shopReason = reasons[0];
      if (shopReason?.Code !== 'ConditionalCheckFailed') throw err;
      return shopReason.Item ? ('limit_reached' as const) : ('shop_missing' as const);
    }
  }

  async list(shopId: string): Promise<EndpointRecord[]> {
    const items = await queryPrefix(this.db, shopPk(shopId), skPrefix.webhookEndpoint, { newestFirst: true });
    return items.map(endpointFromItem);
  }

  /** Several endpoints by shop and id, in one round trip; keyed `<shop>/<endpoint>`. */
  async getMany(refs: { shop_id: string; endpoint_id: string }[]): Promise<Map<string, EndpointRecord>> {
    const wanted = new Map(refs.map((r) => [`${r.shop_id}/${r.endpoint_id}`, keys.webhookEndpoint(r.shop_id, r.endpoint_id)]));
    const found = await batchGet(this.db, [...wanted.values()]);
    const out = new Map<string, EndpointRecord>();
    for (const [ref, key] of wanted) {
      const item = found.get(`${key.pk}|${key.sk}`);
      if (item) out.set(ref, endpointFromItem(item));
    }
    return out;
  }

  private async conditionalUpdate(shopId: string, id: string, sets: Record<string, unknown>, condition: string, values: Record<string, unknown> = {}) {
    const names = Object.fromEntries(Object.keys(sets).map((k) => [`#${k}`, k]));
    const setValues = Object.fromEntries(Object.entries(sets).map(([k, v]) => [`:${k}`, v]));
    try {
      const out = await this.db.doc.update({
        TableName: this.db.tableName,
        Key: keys.webhookEndpoint(shopId, id),
        UpdateExpression: `SET ${Object.keys(sets).map((k) => `#${k} = :${k}`).join(', ')}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...setValues, ...values },
        ReturnValues: 'ALL_NEW',
      });
      return out.Attributes ? endpointFromItem(out.Attributes) : null;
    } catch (err) {
      if (isConditionFailed(err)) return null;
      throw err;
    }
  }

  update(shopId: string, id: string, changes: EndpointChanges, updatedAt: string) {
    const { filter, ...rest } = changes;
    const sets = { ...rest, ...(filter !== undefined ? { filter: filterAttribute(filter) } : {}), updated_at: updatedAt };
    return this.conditionalUpdate(shopId, id, sets, 'attribute_exists(pk)');
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

  /**
   * Deletes the endpoint (its encrypted secrets with it) and gives its place under the cap
   * back, in one transaction; false when there was nothing to delete. The same transaction
   * leaves a small item with its id for as long as its deliveries are kept: the rows sit under
   * the endpoint, and that is how an event's list still finds them (./event-deliveries.ts).
   */
  async delete(shopId: string, id: string): Promise<boolean> {
    const remove = { TableName: this.db.tableName, Key: keys.webhookEndpoint(shopId, id), ConditionExpression: 'attribute_exists(pk)' };
    const now = Date.now();
    const trace = {
      Put: {
        TableName: this.db.tableName,
        // Every row to it was created before this: none outlives the event retention from now.
        Item: { ...keys.deletedEndpoint(shopId, id), entity: 'deleted_webhook_endpoint', endpoint_id: id, deleted_at: new Date(now).toISOString(), [TABLE.ttlAttribute]: Math.floor(now / 1000) + EVENT_RETENTION_SECONDS },
      },
    };
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          { Delete: { ...remove } },
          trace,
          {
            Update: {
              TableName: this.db.tableName,
              Key: keys.shop(shopId),
              UpdateExpression: 'SET webhook_endpoint_count = webhook_endpoint_count - :one',
              ConditionExpression: 'webhook_endpoint_count >= :one',
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
        ],
      });
      return true;
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
      if (reasons[1]?.Code !== 'ConditionalCheckFailed') throw err;
    }
    // A shop saved before it counted its endpoints has no count to give back.
    try {
      await this.db.doc.transactWrite({ TransactItems: [{ Delete: { ...remove } }, trace] });
      return true;
    } catch (err) {
      if (cancellationReasons(err)?.[0]?.Code === 'ConditionalCheckFailed') return false;
      throw err;
    }
  }
}
