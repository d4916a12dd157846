import { newId } from '../ids';
import type { EventType } from './event-types';
import type { Resource } from './resources';

/** Events are kept 30 days (table TTL). */
export const EVENT_RETENTION_SECONDS = 30 * 24 * 60 * 60;

/**
 * An event as stored: the contract's event plus the shop it belongs to and, for test
 * events, the one endpoint it is addressed to. It is written in the same transaction as
 * the change it reports (outbox), so the pipeline only has to deliver it.
 */
export interface EventRecord {
  id: string;
  object: 'event';
  type: EventType;
  timestamp: string;
  data: Record<string, unknown>;
  shop_id: string;
  endpoint_id: string | null;
}

export function newEvent(
  shopId: string,
  type: EventType,
  data: object,
  now: Date,
  endpointId: string | null = null,
): EventRecord {
  return { ...eventWithId(newId('evt', now.getTime()), shopId, type, data, now), endpoint_id: endpointId };
}

/**
 * An event whose id the caller derives (a change that must always give the same id), for every
 * endpoint it concerns.
 */
export function eventWithId(id: string, shopId: string, type: EventType, data: object, now: Date): EventRecord {
  return {
    id,
    object: 'event',
    type,
    timestamp: now.toISOString(),
    data: data as Record<string, unknown>,
    shop_id: shopId,
    endpoint_id: null,
  };
}

/** The event as the API and webhook bodies show it. */
export function toEventResource(event: EventRecord): Resource<'event'> {
  // `data` was made by the resource mapper of its type when the event was written (newEvent's callers).
  return {
    id: event.id,
    object: 'event' as const,
    type: event.type,
    timestamp: event.timestamp,
    data: event.data,
  } as Resource<'event'>;
}
