import type { DeliveryRecord } from '../records';
import type { Page, PageRequest } from '../../domain/pagination';
import type { DeliveryStatus } from '../status';
import { shopPk, skPrefix } from '../../store/keys';
import { idBound } from '../../ids';
import { DynamoFanoutDeliveryStore } from './fanout-deliveries';
import { readEventDeliveries } from './event-deliveries';
import { readEndpointDeliveries } from './endpoint-deliveries';

/**
 * The delivery rows with the API's reads (an endpoint's list, its open counts) on top of the
 * pipeline's (./attempt-deliveries.ts).
 */
export class DynamoDeliveryStore extends DynamoFanoutDeliveryStore {
  /** Every delivery of the event (./event-deliveries.ts). */
  listForEvent(shopId: string, eventId: string): Promise<DeliveryRecord[]> {
    return readEventDeliveries(this.db, shopId, eventId);
  }

  /** An endpoint's deliveries, newest first (./endpoint-deliveries.ts). */
  listForEndpoint(
    shopId: string,
    endpointId: string,
    page: PageRequest,
    status?: DeliveryStatus,
  ): Promise<Page<DeliveryRecord>> {
    return readEndpointDeliveries(this.db, shopId, endpointId, page, status);
  }

  /**
   * How many of the endpoint's open deliveries are pending and retrying: its GSI1 entries (every
   * open row off the fast path), plus the pending rows of its recent deliveries that are not
   * there (on the fast path: their message is on the queue, their first attempt not yet made).
   */
  async countOpenForEndpoint(
    shopId: string,
    endpointId: string,
    now: Date,
  ): Promise<{ pending: number; retrying: number }> {
    const counts = { pending: 0, retrying: 0 };
    const [indexed, recent] = await Promise.all([
      this.openItems(shopId, endpointId, true),
      this.recentPendingIds(shopId, endpointId, new Date(now.getTime() - FAST_PATH_WINDOW_MS)),
    ]);
    const seen = new Set<string>();
    for (const item of indexed) {
      const status = item.status as unknown;
      seen.add(String(item.id));
      if (status === 'pending' || status === 'retrying') counts[status] += 1;
    }
    counts.pending += recent.filter((id) => !seen.has(id)).length;
    return counts;
  }

  /**
   * The ids of the endpoint's pending fast-path deliveries (in no index) created since `since`,
   * newest first, reading at most FAST_PATH_BUDGET of its rows: a `Query` of the table bounded by
   * the delivery ids' time. A Query bills the whole rows it reads (≈ 0.5 KB each), not the
   * projection: at most about 125 read units, and far fewer for an endpoint's usual half hour.
   */
  protected async recentPendingIds(shopId: string, endpointId: string, since: Date): Promise<string[]> {
    const prefix = skPrefix.endpointDeliveries(endpointId);
    const ids: string[] = [];
    let start: Record<string, unknown> | undefined;
    let read = 0;
    do {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :since AND :last',
        FilterExpression: '#status = :pending AND attribute_not_exists(gsi2pk)',
        ProjectionExpression: 'id',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pk': shopPk(shopId),
          ':since': `${prefix}${idBound('dlv', since.getTime(), 'first')}`,
          ':last': `${prefix}~`,
          ':pending': 'pending',
        },
        ScanIndexForward: false,
        Limit: FAST_PATH_BUDGET - read,
        ExclusiveStartKey: start,
      });
      read += out.ScannedCount ?? 0;
      ids.push(...(out.Items ?? []).map((i) => String(i.id)));
      start = out.LastEvaluatedKey;
    } while (start && read < FAST_PATH_BUDGET);
    return ids;
  }
}

/**
 * How far back a pending row may still be on its fast path: its message is received until it is
 * attempted, or, failing 5 times (15 minutes at the queue's visibility timeout), dead-lettered
 * and put in the due index by the next sweep. Delivery ids carry their event's time.
 */
const FAST_PATH_WINDOW_MS = 30 * 60_000;
/** Rows the count of fast-path rows reads at most (an endpoint's last 30 minutes, usually far fewer). */
const FAST_PATH_BUDGET = 1_000;
