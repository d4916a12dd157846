import { notFound } from '../errors';
import type { DeliveryRecord } from '../delivery/records';
import type { DeliveryStatus } from '../delivery/status';
import { toDeliveryResource } from '../delivery/delivery-resource';
import { summarise, type StatsBucket } from '../delivery/endpoint-stats';
import { requireId } from './lookup';
import type { Page, PageRequest } from './pagination';
import type { Resource } from './resources';
import {
  cancelQueued,
  loadEndpoint,
  toEndpointResource,
  type EndpointStore,
  type QueuedDeliveries,
} from './webhook-endpoints';

/** What an endpoint's own pages read: its deliveries (through their endpoint) and its stats counters. */
export interface EndpointDeliveryReader extends QueuedDeliveries {
  listForEndpoint(
    shopId: string,
    endpointId: string,
    page: PageRequest,
    status?: DeliveryStatus,
  ): Promise<Page<DeliveryRecord>>;
  /** Pending and retrying rows of the endpoint; `now` bounds how far back fast-path rows are looked for. */
  countOpenForEndpoint(shopId: string, endpointId: string, now: Date): Promise<{ pending: number; retrying: number }>;
}

export interface EndpointStatsReader {
  window(shopId: string, endpointId: string, now: Date): Promise<StatsBucket[]>;
}

/**
 * What an endpoint's read-only pages read: the endpoint, and a page of its deliveries. Narrower
 * than LifecycleDeps, so those functions are wired without the stores' writes.
 */
export interface EndpointPageDeps {
  endpoints: Pick<EndpointStore, 'get'>;
  deliveries: Pick<EndpointDeliveryReader, 'listForEndpoint'>;
}

export interface LifecycleDeps {
  endpoints: EndpointStore;
  deliveries: EndpointDeliveryReader;
  stats: EndpointStatsReader;
  now: () => Date;
}

export async function getEndpoint(
  deps: Pick<EndpointPageDeps, 'endpoints'>,
  shopId: string,
  id: string,
): Promise<Resource<'webhookEndpoint'>> {
  return toEndpointResource(await loadEndpoint(deps, shopId, id));
}

/**
 * Deletes the endpoint (its secrets go with its item) and frees its place under the cap,
 * then cancels its open deliveries. A crash in between leaves nothing to send: the consumer
 * cancels a delivery whose endpoint is gone when it comes due.
 */
export async function deleteEndpoint(
  deps: Pick<LifecycleDeps, 'endpoints' | 'deliveries' | 'now'>,
  shopId: string,
  id: string,
): Promise<Resource<'deletedWebhookEndpoint'>> {
  const endpoint = await loadEndpoint(deps, shopId, id);
  const at = deps.now();
  // Deleted meanwhile by a concurrent request: that one answers 200, this one 404.
  if (!(await deps.endpoints.delete(shopId, endpoint.id))) throw notFound('webhook endpoint', id);
  await cancelQueued(deps, endpoint, at);
  return { id: endpoint.id, object: 'webhook_endpoint', deleted: true };
}

export async function listEndpointDeliveries(
  deps: EndpointPageDeps,
  shopId: string,
  id: string,
  page: PageRequest,
  status?: DeliveryStatus,
) {
  // The page is read beside the endpoint, both under the shop's key: one round trip, and an
  // unknown endpoint is still a 404 whatever the page held.
  const endpointId = requireId('we', 'webhook endpoint', id);
  const [, found] = await Promise.all([
    loadEndpoint(deps, shopId, endpointId),
    deps.deliveries.listForEndpoint(shopId, endpointId, page, status),
  ]);
  return { items: found.items.map((d) => toDeliveryResource(d, d.event_type)), next: found.next };
}

export async function getEndpointStats(
  deps: LifecycleDeps,
  shopId: string,
  id: string,
): Promise<Resource<'webhookEndpointStats'>> {
  // Read beside the endpoint, as its deliveries are (listEndpointDeliveries).
  const endpointId = requireId('we', 'webhook endpoint', id);
  const [, buckets, open] = await Promise.all([
    loadEndpoint(deps, shopId, endpointId),
    deps.stats.window(shopId, endpointId, deps.now()),
    deps.deliveries.countOpenForEndpoint(shopId, endpointId, deps.now()),
  ]);
  return summarise(endpointId, buckets, open);
}
