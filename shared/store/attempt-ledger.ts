import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttemptEnd, AttemptLedger, Finished } from '../domain/delivery-ports';
import { statsIncrement } from '../domain/endpoint-stats';
import type { Dynamo } from './client';
import { DynamoDeliveryStore, recordAttemptInput } from './deliveries';
import { statsAddInput } from './endpoint-stats';
import { DynamoEndpointStore, endpointFromItem, releaseInput } from './webhook-endpoints';

/**
 * The end of a sent attempt in one TransactWriteItems: the row records it, the endpoint's
 * stats count it, and the endpoint drops the lease (or passes it on) with its health. That
 * is one table request per delivery on the hot path, where it used to be three.
 *
 * The transaction expects what is usual: the row still at attempt N-1, our lease held, and,
 * after a success, a closed circuit and the backlog mark as read (both of which the success
 * must report); a mark that came or went since the read costs one more try. Anything else
 * (a duplicate, a lost lease, a circuit to close, a conflicting transaction) cancels it, and
 * the same changes are made as the separate writes, each conditional on its own and reading
 * back what it changed: nothing recorded twice, nothing lost.
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
    // After a success the endpoint is expected closed, with the backlog mark as read; if the mark came or went, one more try.
    let expect = change.succeeded ? (endpoint.backlog_at === undefined ? USUAL : MARKED) : undefined;
    for (let tries = 0; tries < 2; tries++) {
      const outcome = await this.tryTransaction(end, expect);
      if (outcome === 'done') return { recorded: true, released: { circuitBefore: change.succeeded ? 'closed' : endpoint.health.circuit, handedOver: change.handOver !== undefined, backlog: expect === MARKED } };
      if (outcome === 'duplicate') return { recorded: false, released: await this.endpoints.release(endpoint, delivery.id, token, change) };
      if (outcome === 'other') break;
      expect = outcome === 'marked' ? MARKED : USUAL;
    }
    return { recorded: await this.deliveries.recordAttempt(delivery, update), released: await this.endpoints.release(endpoint, delivery.id, token, change) };
  }

  /** One try: done, or why it was cancelled (the row had moved on; only the backlog mark differed, there or not; anything else). */
  private async tryTransaction(end: AttemptEnd, expect: Expectation | undefined): Promise<'done' | 'duplicate' | 'marked' | 'unmarked' | 'other'> {
    const { delivery, update, endpoint, token, change } = end;
    const inc = statsIncrement(update.entry, update.status);
    const table = { TableName: this.db.tableName };
    try {
      await this.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { ...table, ...recordAttemptInput(delivery, update) } },
            { Update: { ...table, ...releaseInput(endpoint, delivery.id, token, change, expect), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
            ...(inc ? [{ Update: { ...table, ...statsAddInput(delivery.shop_id, delivery.endpoint_id, new Date(update.entry.at), inc) } }] : []),
          ],
        }),
      );
      return 'done';
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const [row, gate] = err.CancellationReasons ?? [];
      // Recorded already (by another consumer after our lease expired): only the lease is ours to end.
      if (row?.Code === 'ConditionalCheckFailed') return 'duplicate';
      if (!expect || gate?.Code !== 'ConditionalCheckFailed' || !gate.Item) return 'other';
      // The SDK leaves this item marshalled, even through the document client.
      const current = endpointFromItem(unmarshall(gate.Item));
      const usual = current.health.circuit === 'closed' && current.leases[delivery.id]?.token === token && (!change.handOver || !current.leases[change.handOver.deliveryId]);
      const mark = current.backlog_at === undefined ? 'unmarked' : 'marked';
      return usual && (mark === 'marked') !== (expect === MARKED) ? mark : 'other';
    }
  }
}

type Expectation = { condition: string; values: Record<string, unknown> };
const USUAL: Expectation = { condition: 'health.circuit = :closed AND attribute_not_exists(backlog_at)', values: { ':closed': 'closed' } };
const MARKED: Expectation = { condition: 'health.circuit = :closed AND attribute_exists(backlog_at)', values: { ':closed': 'closed' } };
