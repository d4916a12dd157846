import { unmarshall } from '@aws-sdk/util-dynamodb';
import { EVENT_RETENTION_SECONDS } from '../../domain/events';
import {
  elementOf,
  parseElement,
  type ChainMember,
  type ChainRef,
  type HoldResult,
  type OrderStore,
  type ReleaseResult,
} from '../resource-order';
import { isOpenStatus, type DeliveryStatus } from '../status';
import { cancellationReasons, isConditionFailed, retryConflicts, type Dynamo } from '../../store/client';
import { keys } from '../../store/keys';

const chainKey = (c: ChainRef) => keys.orderChain(c.shop_id, c.endpoint_id, c.order_key);
const rowKey = (c: ChainRef, element: string) => {
  // The chain is the endpoint's, so its elements' rows sit under that endpoint.
  return keys.delivery(c.shop_id, c.endpoint_id, parseElement(element).id);
};
const sorted = (open: unknown): string[] => (open instanceof Set ? [...(open as Set<string>)].sort() : []);
const isOpen = (status: unknown) => isOpenStatus(status as DeliveryStatus);

/**
 * The chains of ordered delivery (shared/delivery/resource-order.ts): one item per endpoint and
 * resource, `open` a string set, so concurrent joins and leaves are single atomic `ADD` and
 * `DELETE`s that answer with the set after them. Holds and releases are conditional writes on
 * the delivery row; a hold checks the chain in the same transaction.
 */
export class DynamoOrderStore implements OrderStore {
  constructor(private readonly db: Dynamo) {}

  async join(m: ChainMember): Promise<string[]> {
    const out = await retryConflicts(() =>
      this.db.doc.update({
        TableName: this.db.tableName,
        Key: chainKey(m),
        // The chain lives as long as its last delivery's row could.
        UpdateExpression: 'SET entity = :entity, expires_at = :ttl ADD #open :element',
        ExpressionAttributeNames: { '#open': 'open' },
        ExpressionAttributeValues: {
          ':entity': 'order_chain',
          ':ttl': Math.floor(Date.now() / 1000) + EVENT_RETENTION_SECONDS,
          ':element': new Set([elementOf(m)]),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return sorted(out.Attributes?.open);
  }

  async leave(c: ChainRef, element: string): Promise<string[]> {
    try {
      const out = await retryConflicts(() =>
        this.db.doc.update({
          TableName: this.db.tableName,
          Key: chainKey(c),
          UpdateExpression: 'DELETE #open :element',
          // A chain that is gone is not made again by a leave.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#open': 'open' },
          ExpressionAttributeValues: { ':element': new Set([element]) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return sorted(out.Attributes?.open);
    } catch (err) {
      if (isConditionFailed(err)) return [];
      throw err;
    }
  }

  async read(c: ChainRef): Promise<string[]> {
    const out = await this.db.doc.get({
      TableName: this.db.tableName,
      Key: chainKey(c),
      ConsistentRead: true,
      ProjectionExpression: '#open',
      ExpressionAttributeNames: { '#open': 'open' },
    });
    return sorted(out.Item?.open);
  }

  async hold(m: ChainMember, ahead: string, sweepAt: Date): Promise<HoldResult> {
    // A held row waits on its chain, not on a message: into both indexes (a fan-out row was in neither).
    const due = {
      ...keys.dueDelivery(m.id, sweepAt.toISOString()),
      ...keys.openDeliveryByEndpoint(m.shop_id, m.endpoint_id, m.id),
    };
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: this.db.tableName,
              Key: keys.delivery(m.shop_id, m.endpoint_id, m.id),
              UpdateExpression:
                'SET held_by = :by, next_attempt_at = :null, sweep_at = :sweep, gsi1pk = ' +
                ':openPk, gsi1sk = :openSk, gsi2pk = :duePk, gsi2sk = :dueSk',
              ConditionExpression: 'attempts = :zero AND #status = :pending AND attribute_not_exists(held_by)',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: {
                ':by': parseElement(ahead).id,
                ':null': null,
                ':sweep': sweepAt.toISOString(),
                ':openPk': due.gsi1pk,
                ':openSk': due.gsi1sk,
                ':duePk': due.gsi2pk,
                ':dueSk': due.gsi2sk,
                ':zero': 0,
                ':pending': 'pending',
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            // Changes nothing: the hold stands only while what it waits for is in the chain.
            Update: {
              TableName: this.db.tableName,
              Key: chainKey(m),
              UpdateExpression: 'SET entity = :entity',
              ConditionExpression: 'contains(#open, :ahead)',
              ExpressionAttributeNames: { '#open': 'open' },
              ExpressionAttributeValues: { ':entity': 'order_chain', ':ahead': ahead },
            },
          },
        ],
      });
      return 'held';
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const [row] = reasons;
      if (row?.Code !== 'ConditionalCheckFailed') return 'ahead_gone';
      // Marshalled: the document client leaves an error's item as the service sent it.
      return row.Item && unmarshall(row.Item).held_by !== undefined ? 'held' : 'moved';
    }
  }

  async release(c: ChainRef, element: string, now: Date, sweepAt: Date): Promise<ReleaseResult> {
    const { id } = parseElement(element);
    const due = keys.dueDelivery(id, sweepAt.toISOString());
    try {
      await retryConflicts(() =>
        this.db.doc.update({
          TableName: this.db.tableName,
          Key: rowKey(c, element),
          UpdateExpression:
            'SET next_attempt_at = :now, sweep_at = :sweep, gsi2pk = :duePk, gsi2sk = :dueSk REMOVE held_by',
          ConditionExpression: 'attribute_exists(held_by) AND #status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':now': now.toISOString(),
            ':sweep': sweepAt.toISOString(),
            ':duePk': due.gsi2pk,
            ':dueSk': due.gsi2sk,
            ':pending': 'pending',
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'released';
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      return err.Item && isOpen(unmarshall(err.Item).status) ? 'open' : 'ended';
    }
  }
}
