import type { DeliveryRecord } from '../deliveries';
import type { Page, PageRequest } from '../../domain/pagination';
import type { DeliveryStatus } from '../delivery-status';
import type { EventType } from '../../domain/event-types';
import { batchGet, stripKeys } from '../../store/client';
import { keys, shopPk, skPrefix } from '../../store/keys';
import { queryFilteredPage, queryPage } from '../../store/pagination';
import { DynamoAttemptDeliveryStore } from './attempt-deliveries';

/** The delivery rows with the API's reads (an endpoint's list, its open counts) on top of the pipeline's (./attempt-deliveries.ts). */
export class DynamoDeliveryStore extends DynamoAttemptDeliveryStore {
  /**
   * An endpoint's deliveries, newest first: its rows sit under it (ids are time-ordered), so a
   * page is one strongly consistent Query of the table. With a status filter at most 1,000 rows
   * are read per page.
   */
  async listForEndpoint(shopId: string, endpointId: string, page: PageRequest, status?: DeliveryStatus): Promise<Page<TypedDelivery>> {
    const query = {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': shopPk(shopId), ':prefix': skPrefix.endpointDeliveries(endpointId), ...(status ? { ':status': status } : {}) },
      ...(status ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
      ScanIndexForward: false,
      ConsistentRead: true,
    };
    const found = status ? await queryFilteredPage(this.db, query, page, FILTER_BUDGET) : await queryPage(this.db, query, page);
    const deliveries = found.items.map((i) => stripKeys<DeliveryRecord>(i));
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

  /** How many of the endpoint's open deliveries are pending and retrying (its GSI1 entries, status only). */
  async countOpenForEndpoint(shopId: string, endpointId: string): Promise<{ pending: number; retrying: number }> {
    const counts = { pending: 0, retrying: 0 };
    for (const item of await this.openItems(shopId, endpointId, true)) {
      const status = item.status as unknown;
      if (status === 'pending' || status === 'retrying') counts[status] += 1;
    }
    return counts;
  }
}

/** Rows a filtered page of an endpoint's deliveries reads at most. */
const FILTER_BUDGET = 1_000;

type TypedDelivery = DeliveryRecord & { event_type: EventType };
