import type { EventFilter } from '../domain/event-filter-schema';
import type {
  EndpointChanges,
  EndpointRecord,
  EndpointStore,
  EndpointVersion,
  StoredSecret,
} from '../domain/webhook-endpoints';
import { EVENT_RETENTION_SECONDS } from '../domain/events';
import { cancellationReasons, isConditionFailed, queryPrefix } from './client';
import { DynamoEndpointGateStore } from '../delivery/dynamo/endpoint-gate';
import { configItem, endpointFromItems, readEndpoints, stateItem } from '../delivery/dynamo/endpoint-state';
import { isEndpointStateKey, keys, shopPk, skPrefix, STATE_SUFFIX } from './keys';
import { TABLE } from './table';

/**
 * The filter as stored: its JSON text, not a map. A map would come back with numbers as
 * DynamoDB keeps them (one over 2^53 cannot be read back at all, which would make the
 * endpoint unreadable), and nothing ever reads into it: it is written and read whole.
 */
const filterAttribute = (filter: EventFilter | null | undefined): string | null =>
  filter ? JSON.stringify(filter) : null;

/** Read once, by the fan-out, from the stream; kept a day. */
const rateRaiseItem = (shopId: string, endpointId: string, at: string) => ({
  ...keys.rateRaise(shopId, endpointId, at),
  entity: 'rate_raise',
  shop_id: shopId,
  endpoint_id: endpointId,
  at,
  [TABLE.ttlAttribute]: Math.floor(Date.parse(at) / 1000) + 86_400,
});

/**
 * The API's reads and writes of endpoints (create, list, update, rotate, delete), with the
 * consumer's gate beneath. Each endpoint is its configuration item and its state item
 * (../delivery/dynamo/endpoint-state.ts): reads join the two, and a change of what both hold
 * (`enabled`) or of what the state holds (health, `failing_since`) writes them in one transaction.
 */
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
              ConditionExpression:
                'attribute_exists(pk) AND (attribute_not_exists(webhook_endpoint_count) OR ' +
                'webhook_endpoint_count < :max)',
              ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': maxPerShop },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Put: {
              TableName: this.db.tableName,
              Item: configItem(endpoint, filterAttribute(endpoint.filter)),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          { Put: { TableName: this.db.tableName, Item: stateItem(endpoint, new Date(endpoint.created_at)) } },
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

  /**
   * Configurations and states: one Query of the shop's partition, each state item right after its
   * configuration (keys.endpointState).
   */
  async list(shopId: string): Promise<EndpointRecord[]> {
    const items = await queryPrefix(this.db, shopPk(shopId), skPrefix.webhookEndpoint, { newestFirst: true });
    const stateOf = new Map(
      items
        .filter((i) => isEndpointStateKey(String(i.sk)))
        .map((s) => [String(s.sk).slice(0, -STATE_SUFFIX.length), s]),
    );
    return items
      .filter((i) => !isEndpointStateKey(String(i.sk)))
      .map((c) => endpointFromItems(c, stateOf.get(String(c.sk))));
  }

  /** Several endpoints by shop and id, in one round trip; keyed `<shop>/<endpoint>`. */
  getMany(refs: { shop_id: string; endpoint_id: string }[]): Promise<Map<string, EndpointRecord>> {
    return readEndpoints(this.db, refs);
  }

  /**
   * Writes the configuration's `sets` under `condition`; the endpoint as it then is, or null when
   * the condition failed.
   */
  private async conditionalUpdate(
    shopId: string,
    id: string,
    sets: Record<string, unknown>,
    condition: string,
    values: Record<string, unknown> = {},
  ) {
    try {
      const out = await this.db.doc.update({
        TableName: this.db.tableName,
        ...setsInput(keys.webhookEndpoint(shopId, id), sets, condition, values),
        ReturnValues: 'ALL_NEW',
      });
      if (!out.Attributes) return null;
      const state = await this.db.doc.get({
        TableName: this.db.tableName,
        Key: keys.endpointState(shopId, id),
        ConsistentRead: true,
      });
      return endpointFromItems(out.Attributes, state.Item);
    } catch (err) {
      if (isConditionFailed(err)) return null;
      throw err;
    }
  }

  async update(shopId: string, id: string, changes: EndpointChanges, updatedAt: string, read?: EndpointVersion) {
    const { filter, health, failing_since: failingSince, rate_raised: rateRaised, ...rest } = changes;
    const [condition, values] = read
      ? [
          'attribute_exists(pk) AND updated_at = :readAt AND enabled = :readEnabled',
          { ':readAt': read.updated_at, ':readEnabled': read.enabled },
        ]
      : ['attribute_exists(pk)', {}];
    const sets = {
      ...rest,
      ...(filter !== undefined ? { filter: filterAttribute(filter) } : {}),
      updated_at: updatedAt,
    };
    const stateSets = Object.fromEntries(
      Object.entries({
        health,
        failing_since: failingSince,
        enabled: changes.enabled,
        // New deliveries no longer queue behind places promised at the old rate.
        rate_tail: rateRaised ? null : undefined,
      }).filter(([, v]) => v !== undefined),
    );
    if (Object.keys(stateSets).length === 0) return this.conditionalUpdate(shopId, id, sets, condition, values);
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: this.db.tableName,
              ...setsInput(keys.webhookEndpoint(shopId, id), sets, condition, values),
            },
          },
          {
            Update: {
              TableName: this.db.tableName,
              ...movingVersionIf(
                rateRaised,
                setsInput(keys.endpointState(shopId, id), stateSets, 'attribute_exists(pk)'),
              ),
            },
          },
          ...(rateRaised
            ? [{ Put: { TableName: this.db.tableName, Item: rateRaiseItem(shopId, id, updatedAt) } }]
            : []),
        ],
      });
      return this.get(shopId, id);
    } catch (err) {
      if (cancellationReasons(err)?.[0]?.Code === 'ConditionalCheckFailed') return null;
      throw err;
    }
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
   * the endpoint, and that is how an event's list still finds them
   * (../delivery/dynamo/event-deliveries.ts).
   */
  async delete(shopId: string, id: string): Promise<boolean> {
    const remove = {
      TableName: this.db.tableName,
      Key: keys.webhookEndpoint(shopId, id),
      ConditionExpression: 'attribute_exists(pk)',
    };
    const removeState = { TableName: this.db.tableName, Key: keys.endpointState(shopId, id) };
    const now = Date.now();
    const trace = {
      Put: {
        TableName: this.db.tableName,
        // Every row to it was created before this: none outlives the event retention from now.
        Item: {
          ...keys.deletedEndpoint(shopId, id),
          entity: 'deleted_webhook_endpoint',
          endpoint_id: id,
          deleted_at: new Date(now).toISOString(),
          [TABLE.ttlAttribute]: Math.floor(now / 1000) + EVENT_RETENTION_SECONDS,
        },
      },
    };
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          { Delete: remove },
          { Delete: removeState },
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
      if (cancellationReasons(err)?.[0]?.Code === 'ConditionalCheckFailed') return false;
      throw err;
    }
  }
}

/**
 * A rate raise moves the state's `lease_version` too. An admission counted on the endpoint as read before the
 * raise (the old rate, the old line's end) then fails its condition and reads the endpoint again
 * (../delivery/dynamo/endpoint-gate.ts, `admit`); written, it put the old line's end back over the raise's
 * reset, and new deliveries and the woken waiting ones queued behind the old line as before.
 */
function movingVersionIf(moving: boolean | undefined, input: ReturnType<typeof setsInput>) {
  if (!moving) return input;
  return {
    ...input,
    UpdateExpression: `${input.UpdateExpression}, #lease_version = if_not_exists(#lease_version, :zero) + :one`,
    ExpressionAttributeNames: { ...input.ExpressionAttributeNames, '#lease_version': 'lease_version' },
    ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':zero': 0, ':one': 1 },
  };
}

/** An update that sets each of `sets` (attribute names as placeholders) under `condition`. */
function setsInput(
  key: Record<string, string>,
  sets: Record<string, unknown>,
  condition: string,
  values: Record<string, unknown> = {},
) {
  return {
    Key: key,
    UpdateExpression: `SET ${Object.keys(sets)
      .map((k) => `#${k} = :${k}`)
      .join(', ')}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: Object.fromEntries(Object.keys(sets).map((k) => [`#${k}`, k])),
    ExpressionAttributeValues: { ...Object.fromEntries(Object.entries(sets).map(([k, v]) => [`:${k}`, v])), ...values },
  };
}
