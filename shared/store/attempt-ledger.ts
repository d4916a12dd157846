import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { AttemptEnd, AttemptLedger, Finished } from '../domain/delivery-ports';
import { statsIncrement } from '../domain/endpoint-stats';
import type { Dynamo } from './client';
import { DynamoDeliveryStore, recordAttemptInput } from './deliveries';
import { statsAddInput } from './endpoint-stats';
import { DynamoEndpointStore, releaseInput } from './webhook-endpoints';

/**
 * The end of a sent attempt in one TransactWriteItems: the row records it, the endpoint's
 * stats count it, and the endpoint drops the lease (or passes it on) with its health. That
 * is one table request per delivery on the hot path, where it used to be three.
 *
 * The transaction expects what is usual: the row still at attempt N-1, our lease held, and,
 * after a success, a closed circuit and no backlog mark (both of which the success must
 * report). Anything else (a duplicate, a lost lease, a circuit to close, a backlog to take,
 * a conflicting transaction) cancels it, and the same changes are made as the separate
 * writes, each conditional on its own and reading back what it changed: nothing recorded
 * twice, nothing lost.
 */
export class DynamoAttemptLedger implements AttemptLedger {
  private readonly deliveries: DynamoDeliveryStore;
  private readonly endpoints: DynamoEndpointStore;

  constructor(private readonly db: Dynamo) {
    this.deliveries = new DynamoDeliveryStore(db);
    this.endpoints = new DynamoEndpointStore(db);
  }

  async finish(end: AttemptEnd): Promise<Finished> {
    const { delivery, update, endpoint, token, change } = end;
    const inc = statsIncrement(update.entry, update.status);
    const usual = change.succeeded ? { condition: 'health.circuit = :closed AND attribute_not_exists(backlog_at)', values: { ':closed': 'closed' } } : undefined;
    const table = { TableName: this.db.tableName };
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { ...table, ...recordAttemptInput(delivery, update) } },
            { Update: { ...table, ...releaseInput(endpoint, delivery.id, token, change, usual) } },
            ...(inc ? [{ Update: { ...table, ...statsAddInput(delivery.shop_id, delivery.endpoint_id, new Date(update.entry.at), inc) } }] : []),
          ],
        }),
      );
      return { recorded: true, released: { circuitBefore: change.succeeded ? 'closed' : endpoint.health.circuit, handedOver: change.handOver !== undefined, backlog: false } };
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      // Recorded already (by another consumer after our lease expired): only the lease is ours to end.
      const duplicate = err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
      const recorded = duplicate ? false : await this.deliveries.recordAttempt(delivery, update);
      return { recorded, released: await this.endpoints.release(endpoint, delivery.id, token, change) };
    }
  }
}
