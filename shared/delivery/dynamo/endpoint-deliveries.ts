import type { DeliveryRecord } from '../records';
import type { Page, PageRequest } from '../../domain/pagination';
import type { DeliveryStatus } from '../status';
import { stripKeys, type Dynamo } from '../../store/client';
import { shopPk, skPrefix } from '../../store/keys';
import { queryFilteredPage, queryPage } from '../../store/pagination';

/** Rows a filtered page of an endpoint's deliveries reads at most. */
const FILTER_BUDGET = 1_000;

/**
 * An endpoint's deliveries, newest first: its rows sit under it (ids are time-ordered), so a
 * page is one strongly consistent Query of the table. With a status filter at most 1,000 rows
 * are read per page. Apart from the delivery stores, so the page's bundle carries none of their
 * writes.
 */
export async function readEndpointDeliveries(
  db: Dynamo,
  shopId: string,
  endpointId: string,
  page: PageRequest,
  status?: DeliveryStatus,
): Promise<Page<DeliveryRecord>> {
  const query = {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: {
      ':pk': shopPk(shopId),
      ':prefix': skPrefix.endpointDeliveries(endpointId),
      ...(status ? { ':status': status } : {}),
    },
    ...(status ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
    ScanIndexForward: false,
    ConsistentRead: true,
  };
  const found = status ? await queryFilteredPage(db, query, page, FILTER_BUDGET) : await queryPage(db, query, page);
  return { items: found.items.map((i) => stripKeys<DeliveryRecord>(i)), next: found.next };
}
