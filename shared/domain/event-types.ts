/** Event types receivers can subscribe to; the one list every check and schema reads. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  'call.completed',
  'job.created',
  'job.approved',
  'job.declined',
  'webhook_endpoint.disabled',
] as const;

/** Sent only to the one endpoint named by POST /v1/webhook-endpoints/{id}/test. */
export const TEST_EVENT_TYPE = 'webhook_endpoint.test';

export const EVENT_TYPES = [...SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE] as const;
export type EventType = (typeof EVENT_TYPES)[number];
