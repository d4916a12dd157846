import * as z from 'zod';
import { CALL_OUTCOMES, URGENCIES } from './call-ingest-schema';
import { DELIVERY_STATUSES } from '../delivery/status';
import { FILTER_DESCRIPTION } from './event-filter-schema';
import { EVENT_TYPES } from './event-types';
import { JOB_STATUSES } from './job-values';
import { RECOVERY_STATUSES } from '../delivery/recovery-status';
import { BOOKING_MODES, WEEKDAYS } from './shop-values';
import { SCOPES } from './scopes';
import { ENDPOINT_ORDERINGS } from './webhook-endpoints-schema';

/**
 * The response objects of docs/api.md as zod schemas: the source of the OpenAPI
 * document's components, and (through it) what every end-to-end response is checked
 * against. Strict, so a field that drifts fails a test.
 */
const time = z.iso.datetime();
const nullableTime = time.nullable();
const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`));

export const callSchema = z
  .strictObject({
    id: id('call'),
    object: z.literal('call'),
    direction: z.literal('inbound'),
    status: z.enum(['in_progress', 'completed', 'missed', 'failed']),
    from_number: z.string(),
    to_number: z.string(),
    caller_name: z.string().nullable(),
    started_at: time,
    ended_at: nullableTime,
    duration_seconds: z.int().nullable(),
    outcome: z.enum(CALL_OUTCOMES).nullable(),
    created_at: time,
  })
  .meta({ id: 'Call' });

export const transcriptSchema = z
  .strictObject({
    object: z.literal('transcript'),
    call_id: id('call'),
    turns: z.array(
      z.strictObject({ index: z.int(), speaker: z.enum(['agent', 'caller']), text: z.string(), offset_ms: z.int() }),
    ),
  })
  .meta({ id: 'Transcript' });

export const callSummarySchema = z
  .strictObject({
    object: z.literal('call_summary'),
    call_id: id('call'),
    summary: z.string(),
    outcome: z.enum(CALL_OUTCOMES),
    details: z.strictObject({
      caller_name: z.string().nullable(),
      callback_number: z.string().nullable(),
      service_requested: z.string().nullable(),
      address: z.string().nullable(),
      urgency: z.enum(URGENCIES).nullable(),
    }),
    usage: z.strictObject({ credits: z.int(), billable_seconds: z.int() }),
  })
  .meta({ id: 'CallSummary' });

export const jobSchema = z
  .strictObject({
    id: id('job'),
    object: z.literal('job'),
    version: z.int().min(1),
    status: z.enum(JOB_STATUSES),
    call_id: id('call').nullable(),
    customer: z.strictObject({
      name: z.string().nullable(),
      phone: z.string().nullable(),
      address: z.string().nullable(),
    }),
    service: z.string(),
    description: z.string(),
    urgency: z.enum(URGENCIES),
    requested_window: z.strictObject({ start: time, end: time }).nullable(),
    created_at: time,
    updated_at: time,
    decided_at: nullableTime,
    decline_reason: z.string().nullable(),
  })
  .meta({ id: 'Job' });

const interval = z.strictObject({ open: z.string(), close: z.string() });
export const shopSchema = z
  .strictObject({
    id: id('shop'),
    object: z.literal('shop'),
    name: z.string(),
    greeting: z.string(),
    trade: z.string(),
    timezone: z.string(),
    booking_mode: z.enum(BOOKING_MODES),
    hours: z.strictObject(
      Object.fromEntries(WEEKDAYS.map((d) => [d, z.array(interval)])) as Record<
        (typeof WEEKDAYS)[number],
        z.ZodArray<typeof interval>
      >,
    ),
    emergency_triggers: z.array(z.string()),
    paused: z.boolean(),
    pause_reason: z.string().nullable(),
    owner_email: z.string(),
    phone_number: z.string(),
    updated_at: time,
  })
  .meta({ id: 'Shop' });

export const keyProfileSchema = z
  .strictObject({
    object: z.literal('key_profile'),
    shop: z.strictObject({
      id: id('shop'),
      name: z.string(),
      trade: z.string(),
      timezone: z.string(),
      phone_number: z.string(),
    }),
    plan: z.strictObject({ name: z.string(), included_credits: z.int() }),
    credits: z.strictObject({ balance: z.int(), used_this_period: z.int() }),
    line: z.strictObject({ status: z.enum(['active', 'paused', 'suspended']), phone_number: z.string() }),
    key: z.strictObject({
      id: id('key'),
      mode: z.enum(['test', 'live']),
      scopes: z.array(z.enum(SCOPES)),
      write: z.boolean(),
      created_at: time,
    }),
  })
  .meta({ id: 'KeyProfile' });

export const endpointHealthSchema = z
  .strictObject({
    circuit: z
      .enum(['closed', 'open', 'half_open'])
      .describe(
        'open: only probes go out; half_open: a probe is in flight. ' +
          'A disabled endpoint is sent nothing: it shows the circuit its last attempts left.',
      ),
    consecutive_failures: z.int(),
    last_success_at: nullableTime,
    last_failure_at: nullableTime,
    next_probe_at: nullableTime.describe(
      'While open and the endpoint is enabled: when the next due delivery may go out as a probe. ' +
        'null otherwise: a disabled endpoint gets no probe.',
    ),
  })
  .meta({ id: 'WebhookEndpointHealth' });

const RATE_LIMIT_DESCRIPTION =
  'Requests per second to this endpoint, fleet-wide: at most this many start in any one-second ' +
  'window, bursts included. ' +
  'A delivery over it waits (no attempt used, nothing counted as failed) and goes out as the ' +
  'rate allows. null: only the in-flight bound applies.';

const endpointShape = {
  id: id('we'),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.string()),
  filter: z.record(z.string(), z.unknown()).nullable().describe(FILTER_DESCRIPTION),
  ordering: z
    .enum(ENDPOINT_ORDERINGS)
    .describe(
      'per_resource: events about one resource (the same `data.id`) reach the endpoint in the ' +
        'order they were created; a later one is held while an earlier one is pending or retrying.',
    ),
  rate_limit: z.int().min(1).max(1000).nullable().describe(RATE_LIMIT_DESCRIPTION),
  enabled: z.boolean(),
  disabled_reason: z.enum(['manual', 'failing', 'gone']).nullable(),
  failing_since: nullableTime,
  health: endpointHealthSchema,
  created_at: time,
  updated_at: time,
};
export const webhookEndpointSchema = z.strictObject(endpointShape).meta({ id: 'WebhookEndpoint' });
export const webhookEndpointWithSecretSchema = z
  .strictObject({
    ...endpointShape,
    secret: z
      .string()
      .regex(/^whsec_/)
      .describe('Shown only in this response: store it now.'),
  })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const attemptLogEntrySchema = z
  .strictObject({
    attempt: z.int().min(1),
    at: time,
    response_status: z
      .int()
      .nullable()
      .describe(
        "The receiver's HTTP status; null when it never answered or the attempt was not sent " +
          '(`error: "circuit_open"`).',
      ),
    duration_ms: z.int(),
    error: z.string().nullable(),
    response_snippet: z.string().nullable().describe("At most the first 1 KiB of the receiver's body, as text."),
  })
  .meta({ id: 'DeliveryAttempt' });

export const deliverySchema = z
  .strictObject({
    id: id('dlv'),
    object: z.literal('delivery'),
    endpoint_id: id('we'),
    event_id: id('evt'),
    event_type: z.enum(EVENT_TYPES),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.int(),
    last_attempt_at: nullableTime,
    next_attempt_at: nullableTime,
    last_response_status: z.int().nullable(),
    last_error: z.string().nullable(),
    held_by: id('dlv')
      .nullable()
      .describe(
        'Set while the delivery waits, unsent and using no attempt, behind an earlier open ' +
          'delivery of the same resource to an endpoint with `ordering: "per_resource"`: the ' +
          'delivery it waits for.',
      ),
    attempt_log: z.array(attemptLogEntrySchema).describe('One entry per attempt, oldest first (at most 8).'),
  })
  .meta({ id: 'Delivery' });

export const deletedWebhookEndpointSchema = z
  .strictObject({ id: id('we'), object: z.literal('webhook_endpoint'), deleted: z.literal(true) })
  .meta({ id: 'DeletedWebhookEndpoint' });

const portalSessionShape = {
  object: z.literal('portal_session'),
  id: id('ps'),
  read_only: z.boolean().describe('true: the token allows only the GETs of webhook endpoints and events.'),
  expires_at: time.describe('When the token stops working.'),
  created_at: time,
};
export const portalSessionSchema = z
  .strictObject({
    ...portalSessionShape,
    created_by: id('key')
      .nullable()
      .describe('The API key that made it (the session ends when that key is revoked); null when an operator did.'),
  })
  .meta({ id: 'PortalSession' });
export const portalSessionWithTokenSchema = z
  .strictObject({
    ...portalSessionShape,
    token: z
      .string()
      .regex(/^pst_[0-9A-Za-z]{40}$/)
      .describe("A Bearer credential for the webhook portal's operations; shown only in this response."),
    url: z
      .string()
      .describe(
        'The portal with the token in its fragment (`<base>/portal#token=pst_…`): hand this link ' +
          'to the person who manages the receivers.',
      ),
  })
  .meta({ id: 'PortalSessionWithToken' });
export const deletedPortalSessionSchema = z
  .strictObject({ id: id('ps'), object: z.literal('portal_session'), deleted: z.literal(true) })
  .meta({ id: 'DeletedPortalSession' });

const nullableRate = z.number().min(0).max(1).nullable();
export const webhookEndpointStatsSchema = z
  .strictObject({
    object: z.literal('webhook_endpoint_stats'),
    endpoint_id: id('we'),
    window_hours: z.literal(24),
    attempts: z.int().describe('Attempts sent in the window (not those held back by an open circuit).'),
    succeeded: z.int(),
    failed: z.int(),
    success_rate: nullableRate.describe('succeeded / attempts; null when there were none.'),
    latency_ms: z
      .strictObject({ p50: z.int().nullable(), p95: z.int().nullable() })
      .describe(
        "Of the attempts sent, from a histogram (each value is its bucket's upper bound, at most " +
          '25 % above the true one); null when none.',
      ),
    deliveries: z
      .strictObject({ pending: z.int(), retrying: z.int(), failed: z.int() })
      .describe('Delivery rows by status: open ones now, and those that failed (their last attempt) in the window.'),
  })
  .meta({ id: 'WebhookEndpointStats' });

export const recoverySchema = z
  .strictObject({
    object: z.literal('recovery'),
    id: id('rcv'),
    endpoint_id: id('we'),
    since: time,
    until: time,
    status: z
      .enum(RECOVERY_STATUSES)
      .describe(
        'running: the rest of the window is being worked through in the background; completed: ' +
          'all of it is; cancelled: the endpoint was disabled or deleted first.',
      ),
    deliveries_queued: z
      .int()
      .describe(
        'Events of the window checked so far that are on their way to the endpoint: queued by ' +
          "this recovery, or found already waiting for their first attempt (another request's, or " +
          "the fan-out's).",
      ),
    checked_through: time.describe(
      'Every event of the window up to this time has been checked; `until` once completed.',
    ),
    created_at: time,
    completed_at: nullableTime.describe('When it ended (completed or cancelled); null while running.'),
  })
  .meta({ id: 'Recovery' });

const eventShape = { id: id('evt'), object: z.literal('event'), timestamp: time };

/** The body of one event type: the event with its typed `data` object. */
const typedEvent = <T extends (typeof EVENT_TYPES)[number], D extends z.ZodType>(type: T, data: D, name: string) =>
  z.strictObject({ ...eventShape, type: z.literal(type), data }).meta({ id: name });

const callCompleted = typedEvent('call.completed', callSchema, 'CallCompletedEvent');
const jobCreated = typedEvent('job.created', jobSchema, 'JobCreatedEvent');
const jobApproved = typedEvent('job.approved', jobSchema, 'JobApprovedEvent');
const jobDeclined = typedEvent('job.declined', jobSchema, 'JobDeclinedEvent');
const endpointDisabled = typedEvent('webhook_endpoint.disabled', webhookEndpointSchema, 'WebhookEndpointDisabledEvent');
const endpointTest = typedEvent(
  'webhook_endpoint.test',
  z.strictObject({ endpoint_id: id('we') }),
  'WebhookEndpointTestEvent',
);

/** The webhook body of each event type. */
export const webhookBodies: Record<(typeof EVENT_TYPES)[number], z.ZodType> = {
  'call.completed': callCompleted,
  'job.created': jobCreated,
  'job.approved': jobApproved,
  'job.declined': jobDeclined,
  'webhook_endpoint.disabled': endpointDisabled,
  'webhook_endpoint.test': endpointTest,
};

/** An event as the API lists it: one of the typed bodies, told apart by `type`. */
export const eventSchema = z
  .discriminatedUnion('type', [callCompleted, jobCreated, jobApproved, jobDeclined, endpointDisabled, endpointTest])
  .meta({ id: 'Event' });

/** GET /v1/event-types: one event type, described once. */
export const eventTypeSchema = z
  .strictObject({
    object: z.literal('event_type'),
    type: z.enum(EVENT_TYPES),
    description: z.string(),
    schema: z
      .record(z.string(), z.unknown())
      .describe(
        'JSON Schema (2020-12) of the event, self-contained (`$defs`): the same as this ' +
          "document's `webhooks` entry for the type.",
      ),
    example: eventSchema,
  })
  .meta({ id: 'EventType' });

const deliveries = { deliveries: z.array(deliverySchema) };
/** GET /v1/events/{id}: the event and its deliveries, typed by `type` the same way. */
export const eventWithDeliveriesSchema = z
  .discriminatedUnion('type', [
    callCompleted.extend(deliveries).meta({ id: 'CallCompletedEventWithDeliveries' }),
    jobCreated.extend(deliveries).meta({ id: 'JobCreatedEventWithDeliveries' }),
    jobApproved.extend(deliveries).meta({ id: 'JobApprovedEventWithDeliveries' }),
    jobDeclined.extend(deliveries).meta({ id: 'JobDeclinedEventWithDeliveries' }),
    endpointDisabled.extend(deliveries).meta({ id: 'WebhookEndpointDisabledEventWithDeliveries' }),
    endpointTest.extend(deliveries).meta({ id: 'WebhookEndpointTestEventWithDeliveries' }),
  ])
  .meta({ id: 'EventWithDeliveries' });

/**
 * The resource types the domain's mappers return (`toJobResource(): Resource<'job'>`): derived
 * from the schemas above, so a mapper that drifts from the documented response fails to
 * compile. The domain imports them as types only: the schemas stay out of the Lambda bundles.
 */
export const resourceSchemas = {
  call: callSchema,
  transcript: transcriptSchema,
  callSummary: callSummarySchema,
  job: jobSchema,
  shop: shopSchema,
  keyProfile: keyProfileSchema,
  endpointHealth: endpointHealthSchema,
  webhookEndpoint: webhookEndpointSchema,
  webhookEndpointWithSecret: webhookEndpointWithSecretSchema,
  delivery: deliverySchema,
  deletedWebhookEndpoint: deletedWebhookEndpointSchema,
  webhookEndpointStats: webhookEndpointStatsSchema,
  recovery: recoverySchema,
  portalSession: portalSessionSchema,
  portalSessionWithToken: portalSessionWithTokenSchema,
  deletedPortalSession: deletedPortalSessionSchema,
  event: eventSchema,
  eventWithDeliveries: eventWithDeliveriesSchema,
};
export type Resource<K extends keyof typeof resourceSchemas> = z.output<(typeof resourceSchemas)[K]>;
