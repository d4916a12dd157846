import type { DeliveryStatus } from './status';
import type { EventRecord } from '../domain/events';
import type { EventType } from '../domain/event-types';

/**
 * A delivery's row, its queue message and the ports that keep them: the shapes the fan-out,
 * the consumer and their stores share, apart from the logic (./fan-out.ts, ./attempt-plan.ts,
 * ./ports.ts) so none of those needs another to name them.
 */

export interface AttemptRecord {
  attempt: number;
  at: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
  response_snippet: string | null;
}

export interface DeliveryRecord {
  id: string;
  shop_id: string;
  event_id: string;
  /** The event's type, copied at creation: an endpoint's list of deliveries shows it without reading events. */
  event_type: EventType;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  /** The attempts so far (at most 8, `circuit_open` ones included); the API shows it as `attempt_log`. */
  history: AttemptRecord[];
  /** `fanout` for the first delivery of an event, `redeliver` for one asked for by the API. */
  origin: 'fanout' | 'redeliver';
  created_at: string;
  /**
   * While open: when the sweeper must look at the row if nothing else has woken it by then
   * (its due time, plus a grace when a queue message or schedule is set to wake it); the row
   * is then in the due index. Null on a fan-out row's fast path (its message is on the queue:
   * in no index until it is retried, held or put off) and once the delivery has ended.
   */
  sweep_at: string | null;
  /**
   * The resource (`data.id`) whose order the delivery follows, set at creation when its endpoint
   * had `ordering: "per_resource"` (./resource-order.ts); absent: unordered.
   */
  order_key?: string;
  /**
   * While held behind an earlier open delivery of its resource: that delivery's id (no attempt, no
   * message, `next_attempt_at` null).
   */
  held_by?: string;
}

/** What addresses a delivery row: it sits under its endpoint. */
export type DeliveryRef = Pick<DeliveryRecord, 'shop_id' | 'endpoint_id' | 'id'>;

/** What travels on the queue and in schedules: ids only, never payloads. */
export interface DeliveryMessage {
  shop_id: string;
  event_id: string;
  delivery_id: string;
  /** Lets the consumer read row, event and endpoint in one request. */
  endpoint_id: string;
  attempt: number;
  /** How many times this message was put back for its endpoint's in-flight limit (each wait is longer). */
  deferrals?: number;
  /**
   * The place it was promised when it waited for its endpoint's rate limit (epoch ms): it goes
   * before those that did not wait.
   */
  rate_at?: number;
  /**
   * How long after its admission its request may start (ms), when it missed the usual grace once
   * (./rate-window.ts).
   */
  rate_grace?: number;
  /**
   * The event itself, when the fan-out had it in hand and it is small (MESSAGE_EVENT_MAX_BYTES):
   * the consumer then reads only row and endpoint, half the items of its batch read. Events
   * never change once written. A deferred message keeps it; retries, sweeps and
   * redeliveries carry ids only.
   */
  event?: EventRecord;
}

/**
 * An event rides in its delivery messages up to this size (JSON): ten of them stay far inside one
 * SQS batch's 256 KB.
 */
export const MESSAGE_EVENT_MAX_BYTES = 16 * 1024;

const isMessageEvent = (message: DeliveryMessage, event: EventRecord): boolean =>
  event.id === message.event_id && event.shop_id === message.shop_id;

/** The message with its event in it, when small enough. */
export function carryingEvent(message: DeliveryMessage, event: EventRecord): DeliveryMessage {
  if (!isMessageEvent(message, event)) return message;
  return Buffer.byteLength(JSON.stringify(event)) <= MESSAGE_EVENT_MAX_BYTES ? { ...message, event } : message;
}

/** The event a message carries, if it is that message's own; otherwise it is read from the table. */
export const carriedEvent = (message: DeliveryMessage): EventRecord | undefined =>
  message.event && isMessageEvent(message, message.event) ? message.event : undefined;

/** Ids only (a schedule's input is at most 8 KB). */
export function withoutEvent({ event: _event, ...ids }: DeliveryMessage): DeliveryMessage {
  return ids;
}

export interface DeliveryStore {
  /**
   * Creates the rows that do not exist yet. Returns the new ones and those an earlier try wrote
   * that are still pending, never attempted and not held: a retry joins them to their chains
   * again, and enqueues those on the fast path (`sweep_at` null: nothing else wakes them).
   */
  createMissing(rows: DeliveryRecord[]): Promise<DeliveryRecord[]>;
  get(ref: DeliveryRef): Promise<DeliveryRecord | null>;
  /**
   * Of these rows, those that exist, were never attempted and are on the fast path (nothing but a
   * message wakes them).
   */
  unsent(refs: DeliveryRef[]): Promise<DeliveryRecord[]>;
  /**
   * Takes an open row on its fast path (`sweep_at` null) into the due index and its endpoint's
   * open deliveries, for the sweeper at `sweepAt`: its message is put off, or may be lost.
   * False when it is there already, or has ended.
   */
  index(delivery: Pick<DeliveryRecord, 'shop_id' | 'event_id' | 'id' | 'endpoint_id'>, sweepAt: Date): Promise<boolean>;
  /** Ends an open delivery as `cancelled` (one that ended meanwhile keeps its outcome). */
  cancel(delivery: DeliveryRef): Promise<boolean>;
}

export interface DeliveryQueue {
  send(messages: DeliveryMessage[]): Promise<void>;
}

/** The queue message that wakes a row for its next attempt (or the given one). */
export const messageOf = (d: DeliveryRecord, attempt = d.attempts + 1): DeliveryMessage => ({
  shop_id: d.shop_id,
  event_id: d.event_id,
  delivery_id: d.id,
  endpoint_id: d.endpoint_id,
  attempt,
});
