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

/** What each type means, for app developers (GET /v1/event-types, the OpenAPI webhooks, the portal's form). */
export const EVENT_TYPE_DESCRIPTIONS: Record<EventType, string> = {
  'call.completed':
    'A call ended and its record is complete: `data` is the call (outcome, duration, caller). ' +
    'Its transcript and summary are readable from now on.',
  'job.created':
    'A call left a job in the work queue, waiting for the shop to approve or decline it: `data` is the job.',
  'job.approved': 'The shop approved a job: `data` is the job as it is after the change (status `approved`).',
  'job.declined': 'The shop declined a job: `data` is the job as it is after the change (status `declined`).',
  'webhook_endpoint.disabled':
    'A webhook endpoint of the shop was disabled: by a request, after 3 days without a success, ' +
    "or because it answered 410. `data` is that endpoint (never its secret); sent to the shop's " +
    'other endpoints.',
  'webhook_endpoint.test':
    'A test sent on request (`POST /v1/webhook-endpoints/{id}/test`) to that one endpoint, ' +
    'whatever it subscribes to: `data` names the endpoint.',
};
