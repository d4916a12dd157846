import type { EventRecord } from '../domain/events';
import type { EventType } from '../domain/event-types';
import type { Resource } from '../domain/resources';
import type { AttemptRecord, DeliveryRecord } from './records';
import { isOpenStatus } from './status';

/** A delivery row as the API shows it (docs/api.md, Deliveries). */
export function toDeliveryResource(d: DeliveryRecord, eventType: EventType): Resource<'delivery'> {
  return {
    id: d.id,
    object: 'delivery' as const,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: eventType,
    status: d.status,
    attempts: d.attempts,
    last_attempt_at: d.last_attempt_at,
    next_attempt_at: d.next_attempt_at,
    last_response_status: d.last_response_status,
    last_error: d.last_error,
    // Only an open delivery waits; an ended one shows no hold, whatever its row still holds.
    held_by: isOpenStatus(d.status) ? (d.held_by ?? null) : null,
    attempt_log: (d.history ?? []).map(toAttemptLogEntry),
  };
}

/** One attempt as the API shows it; the row names the receiver's status `status`. */
export function toAttemptLogEntry(a: AttemptRecord): Resource<'delivery'>['attempt_log'][number] {
  return {
    attempt: a.attempt,
    at: a.at,
    response_status: a.status,
    duration_ms: a.duration_ms,
    error: a.error,
    response_snippet: a.response_snippet,
  };
}

export interface EventReader {
  get(shopId: string, eventId: string): Promise<EventRecord | null>;
}
