import type { DeliveryRecord } from '../domain/deliveries';
import type { Page, PageRequest } from '../domain/pagination';
import type { DeliveryStatus } from '../domain/delivery-status';
import type { EventType } from '../domain/event-types';
import { batchGet, stripKeys } from './client';
import { idBound } from '../ids';
import { gsi3Partition, keys, shopPk } from './keys';
import { queryFilteredPage, queryPage } from './pagination';
import { DynamoAttemptDeliveryStore } from './attempt-deliveries';

/** The delivery rows with the API's reads (an endpoint's list, its open counts) on top of the pipeline's (./attempt-deliveries.ts). */
export class DynamoDeliveryStore extends DynamoAttemptDeliveryStore {
  /**
   * An endpoint's deliveries, newest first, through GSI3 (keys and status), then their rows
   * from the table. With a status filter at most 1,000 index entries are read per page.
   */
  async listForEndpoint(shopId: string, endpointId: string, page: PageRequest, status?: DeliveryStatus): Promise<Page<TypedDelivery>> {
    const query = {
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :pk',
      ExpressionAttributeValues: { ':pk': gsi3Partition.endpointDeliveries(shopId, endpointId), ...(status ? { ':status': status } : {}) },
      ...(status ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
      ScanIndexForward: false,
    };
    const found = status ? await queryFilteredPage(this.db, query, page, FILTER_BUDGET) : await queryPage(this.db, query, page);
    const refs = found.items.map((i) => ({ pk: String(i.pk), sk: String(i.sk) }));
    const rows = await batchGet(this.db, refs);
    const deliveries = refs.map((r) => rows.get(`${r.pk}|${r.sk}`)).filter((i): i is Record<string, unknown> => i !== undefined).map((i) => stripKeys<DeliveryRecord>(i));
    return { items: await this.withEventTypes(shopId, deliveries), next: found.next };
  }

  /** Rows written before `event_type` was copied onto them take it from their event (gone events: skipped). */
  private async withEventTypes(shopId: string, rows: DeliveryRecord[]): Promise<TypedDelivery[]> {
    const missing = [...new Set(rows.filter((d) => !d.event_type).map((d) => d.event_id))];
    const events = missing.length ? await batchGet(this.db, missing.map((id) => keys.event(shopId, id))) : new Map();
    const typeOf = (d: DeliveryRecord) => d.event_type ?? (events.get(`${shopPk(shopId)}|EVT#${d.event_id}`)?.type as EventType | undefined);
    return rows.flatMap((d) => {
      const type = typeOf(d);
      return type ? [{ ...d, event_type: type }] : [];
    });
  }

  /**
   * How many of the endpoint's open deliveries are pending and retrying: its GSI1 entries (every
   * open row off the fast path), plus the pending rows of its recent deliveries that are not
   * there (on the fast path: their message is on the queue, their first attempt not yet made).
   */
  async countOpenForEndpoint(shopId: string, endpointId: string, now: Date): Promise<{ pending: number; retrying: number }> {
    const counts = { pending: 0, retrying: 0 };
    const [indexed, recent] = await Promise.all([this.openItems(shopId, endpointId, true), this.recentPendingIds(shopId, endpointId, new Date(now.getTime() - FAST_PATH_WINDOW_MS))]);
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
   * The ids of the endpoint's pending deliveries created since `since`, newest first, reading at
   * most FAST_PATH_BUDGET entries of its list of deliveries (GSI3: keys and status; a `Query`
   * bounded by the delivery ids' time). Where fast-path rows are found: they sit in no other index.
   */
  protected async recentPendingIds(shopId: string, endpointId: string, since: Date): Promise<string[]> {
    const ids: string[] = [];
    let start: Record<string, unknown> | undefined;
    let read = 0;
    do {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        IndexName: 'gsi3',
        KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk >= :since',
        FilterExpression: '#status = :pending',
        ProjectionExpression: 'gsi3sk',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pk': gsi3Partition.endpointDeliveries(shopId, endpointId), ':since': idBound('dlv', since.getTime(), 'first'), ':pending': 'pending' },
        ScanIndexForward: false,
        Limit: FAST_PATH_BUDGET - read,
        ExclusiveStartKey: start,
      });
      read += out.ScannedCount ?? 0;
      ids.push(...(out.Items ?? []).map((i) => String(i.gsi3sk)));
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
/** Index entries the count of fast-path rows reads at most (an endpoint's last 30 minutes, usually far fewer). */
const FAST_PATH_BUDGET = 1_000;

/** Index entries a filtered page of an endpoint's deliveries reads at most. */
const FILTER_BUDGET = 1_000;

type TypedDelivery = DeliveryRecord & { event_type: EventType };
