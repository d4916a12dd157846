import { EVENT_RETENTION_SECONDS, type EventRecord } from '../domain/events';
import { keys } from './keys';
import { TABLE } from './table';

/** The table item of an event: listed by shop and by type, expiring after 30 days. */
export function eventItem(event: EventRecord): Record<string, unknown> {
  return {
    ...keys.event(event.shop_id, event.id),
    ...keys.eventByType(event.shop_id, event.type, event.id),
    entity: 'event',
    [TABLE.ttlAttribute]: Math.floor(Date.parse(event.timestamp) / 1000) + EVENT_RETENTION_SECONDS,
    ...event,
  };
}
