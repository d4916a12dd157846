import { AppError } from '../errors';
import { sweepGraceMs } from './policy';
import { queueAgain, type CurrentDeliveryStore } from './current-delivery';
import { receives } from './fan-out';
import { toDeliveryResource, type EventReader } from './delivery-resource';
import { toEventResource } from '../domain/events';
import { findExisting } from '../domain/lookup';
import { orderKeyFor } from './resource-order';
import type { Resource } from '../domain/resources';
import type { EndpointRecord } from '../domain/webhook-endpoints';

export interface RedeliverDeps {
  events: EventReader;
  endpoints: { list(shopId: string): Promise<EndpointRecord[]> };
  currentDeliveries: CurrentDeliveryStore;
  timeScale: number;
  now: () => Date;
}

/**
 * The event queued again to each target endpoint. `endpointIds` omitted or empty: every
 * enabled endpoint subscribed to its type now, whose filter it matches, that existed when the
 * event was created.
 * Rows only; the table stream enqueues them. Each target's open delivery is superseded, or,
 * if no attempt has reached it yet, answered as this request's own (see ./current-delivery.ts):
 * concurrent redelivers (a client's retry, a double click) share one delivery.
 */
export async function redeliver(
  deps: RedeliverDeps,
  shopId: string,
  eventId: string,
  endpointIds: string[] = [],
): Promise<Resource<'eventWithDeliveries'>> {
  const event = await findExisting('evt', 'event', eventId, (id) => deps.events.get(shopId, id));
  const all = await deps.endpoints.list(shopId);
  let targets: EndpointRecord[];
  if (endpointIds.length === 0) {
    // Those it was for: an endpoint created after the event never had it (no history replay), nor one
    // whose filter it does not match; name one to send it there.
    targets = all.filter((e) => receives(e, event));
  } else {
    targets = [...new Set(endpointIds)].map((id, i) => {
      const endpoint = all.find((e) => e.id === id);
      if (!endpoint)
        throw new AppError('parameter_invalid', `No such webhook endpoint: '${id}'`, { param: `endpoint_ids.${i}` });
      if (!endpoint.enabled)
        throw new AppError('parameter_invalid', `Webhook endpoint '${id}' is disabled; enable it first.`, {
          param: `endpoint_ids.${i}`,
        });
      return endpoint;
    });
  }
  const seen =
    targets.length > 0
      ? await deps.currentDeliveries.ofEvent(
          shopId,
          event.id,
          targets.map((e) => e.id),
        )
      : undefined;
  const opts = { skipReceived: false as const, sweepGraceMs: sweepGraceMs(deps.timeScale) };
  const queued = await Promise.all(
    targets.map((e) => queueAgain(deps, event, e.id, { ...opts, orderKey: orderKeyFor(e, event) }, seen)),
  );
  return { ...toEventResource(event), deliveries: queued.map((q) => toDeliveryResource(q.delivery, event.type)) };
}
