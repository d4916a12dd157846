import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DeliveryRecord } from '../records';
import type { DeliveryRef, DeliveryStore } from '../records';
import type { RateWaitingRows } from '../rate-raise';
import { backOff, batchGet, isConditionFailed, stripKeys } from '../../store/client';
import { keys, shopPk, skPrefix } from '../../store/keys';
import { idBound } from '../../ids';
import { DynamoAttemptDeliveryStore, deliveryItem } from './attempt-deliveries';

/** Recent rows a rate raise reads at most. */
const RECENT_BUDGET = 2_000;

/**
 * The rows as the fan-out writes them (and benchmarks and tests set them up), on top of what the
 * consumer reads and records: apart, so the consumer's bundle does not carry the writes it never makes.
 */
export class DynamoFanoutDeliveryStore extends DynamoAttemptDeliveryStore implements DeliveryStore, RateWaitingRows {
  async createMissing(rows: DeliveryRecord[]): Promise<DeliveryRecord[]> {
    const results = await Promise.all(
      rows.map(async (row) => {
        try {
          await this.db.doc.put({
            TableName: this.db.tableName,
            Item: deliveryItem(row),
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          });
          return row;
        } catch (err) {
          if (!isConditionFailed(err)) throw err;
          // Marshalled: the document client leaves an error's item as the service sent it.
          const existing = err.Item ? stripKeys<DeliveryRecord>(unmarshall(err.Item)) : null;
          // Written by an earlier try of this batch, maybe before its chain had it or its message went.
          return existing && existing.status === 'pending' && existing.attempts === 0 && !existing.held_by
            ? existing
            : null;
        }
      }),
    );
    return results.filter((r): r is DeliveryRecord => r !== null);
  }

  async unsent(refs: DeliveryRef[]): Promise<DeliveryRecord[]> {
    if (refs.length === 0) return [];
    const found = await batchGet(
      this.db,
      refs.map((r) => keys.delivery(r.shop_id, r.endpoint_id, r.id)),
    );
    return [...found.values()]
      .map((item) => stripKeys<DeliveryRecord>(item))
      .filter((d) => d.status === 'pending' && d.attempts === 0 && (d.sweep_at ?? null) === null);
  }

  /**
   * Rows written as given, 25 to a request, unconditionally: how benchmarks and tests set up
   * deliveries (the API goes through ./current-deliveries.ts).
   */
  async createAll(rows: DeliveryRecord[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 25) {
      let requests: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> = {
        [this.db.tableName]: rows.slice(i, i + 25).map((r) => ({ PutRequest: { Item: deliveryItem(r) } })),
      };
      for (let tries = 0; Object.keys(requests).length > 0; tries++) {
        await backOff(tries, 'could not write delivery rows');
        const out = await this.db.doc.batchWrite({ RequestItems: requests });
        requests = (out.UnprocessedItems ?? {}) as typeof requests;
      }
    }
  }

  /** Rows made since `since` (the fast path's) and the endpoint's open deliveries (its index) that may go at `now`. */
  async listWaitingForRate(
    shopId: string,
    endpointId: string,
    { since, now }: { since: Date; now: Date },
  ): Promise<DeliveryRecord[]> {
    const prefix = skPrefix.endpointDeliveries(endpointId);
    const recent: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    // Newest first, and a bounded read: past it, the older ones wake at their places in the old line.
    for (let read = 0; read < RECENT_BUDGET;) {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        FilterExpression: '#status IN (:pending, :retrying)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pk': shopPk(shopId),
          ':from': `${prefix}${idBound('dlv', since.getTime(), 'first')}`,
          ':to': `${prefix}~`,
          ':pending': 'pending',
          ':retrying': 'retrying',
        },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: RECENT_BUDGET - read,
        ExclusiveStartKey: start,
      });
      read += out.ScannedCount ?? 0;
      recent.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
      if (!start) break;
    }
    const rows = new Map(
      [...recent, ...(await this.openItems(shopId, endpointId))].map((i) => {
        const row = stripKeys<DeliveryRecord>(i);
        return [row.id, row] as const;
      }),
    );
    const due = now.toISOString();
    return [...rows.values()].filter((d) =>
      d.held_by
        ? false
        : d.status === 'pending'
          ? d.attempts === 0
          : d.status === 'retrying' && d.next_attempt_at !== null && d.next_attempt_at <= due,
    );
  }
}
