import { toDeliveryResource, type EventReader } from '../delivery/delivery-resource';
import { type DeliveryRecord } from '../delivery/records';
import { findExisting } from './lookup';
import { toEventResource, type EventRecord } from './events';
import type { Resource } from './resources';
import { mapPage, type Page, type PageRequest, type TimeFilter } from './pagination';

export interface EventLogDeps {
  events: EventReader & {
    list(shopId: string, page: PageRequest, type?: string, time?: TimeFilter): Promise<Page<EventRecord>>;
  };
  deliveries: { listForEvent(shopId: string, eventId: string): Promise<DeliveryRecord[]> };
}

export async function listEvents(
  deps: EventLogDeps,
  shopId: string,
  page: PageRequest,
  filter: { type?: string; time?: TimeFilter } = {},
) {
  return mapPage(await deps.events.list(shopId, page, filter.type, filter.time), toEventResource);
}

/** One event with its deliveries, oldest delivery first. */
export async function getEvent(
  deps: EventLogDeps,
  shopId: string,
  id: string,
): Promise<Resource<'eventWithDeliveries'>> {
  const event = await findExisting('evt', 'event', id, (eventId) => deps.events.get(shopId, eventId));
  const deliveries = await deps.deliveries.listForEvent(shopId, id);
  return { ...toEventResource(event), deliveries: deliveries.map((d) => toDeliveryResource(d, event.type)) };
}
