/**
 * Names for the generated types (schema.d.ts, from docs/openapi.json), so that methods and callers
 * say `Job` and `ListJobsParams`, and a change to the document changes them with it.
 */
import type { components, operations, webhooks } from './schema.js';

export type { components, operations, paths, webhooks } from './schema.js';

type Schemas = components['schemas'];

/** The query of an operation (lists and filters). */
export type QueryOf<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

/** The JSON body an operation takes. */
export type BodyOf<O extends keyof operations> = NonNullable<
  operations[O]['requestBody']
>['content']['application/json'];

export type Call = Schemas['Call'];
export type CallList = Schemas['CallList'];
export type CallSummary = Schemas['CallSummary'];
export type Transcript = Schemas['Transcript'];
export type Job = Schemas['Job'];
export type JobList = Schemas['JobList'];
export type Shop = Schemas['Shop'];
export type KeyProfile = Schemas['KeyProfile'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type WebhookEndpointList = Schemas['WebhookEndpointList'];
export type WebhookEndpointStats = Schemas['WebhookEndpointStats'];
export type DeletedWebhookEndpoint = Schemas['DeletedWebhookEndpoint'];
export type Delivery = Schemas['Delivery'];
export type DeliveryList = Schemas['DeliveryList'];
export type Recovery = Schemas['Recovery'];
export type Event = Schemas['Event'];
export type EventFeed = Schemas['EventFeed'];
export type EventList = Schemas['EventList'];
export type EventWithDeliveries = Schemas['EventWithDeliveries'];
export type EventType = Schemas['EventType'];
export type EventTypeList = Schemas['EventTypeList'];
export type PortalSession = Schemas['PortalSession'];
export type PortalSessionList = Schemas['PortalSessionList'];
export type PortalSessionWithToken = Schemas['PortalSessionWithToken'];
export type DeletedPortalSession = Schemas['DeletedPortalSession'];

export type CallCompletedEvent = Schemas['CallCompletedEvent'];
export type JobCreatedEvent = Schemas['JobCreatedEvent'];
export type JobApprovedEvent = Schemas['JobApprovedEvent'];
export type JobDeclinedEvent = Schemas['JobDeclinedEvent'];
export type WebhookEndpointDisabledEvent = Schemas['WebhookEndpointDisabledEvent'];
export type WebhookEndpointTestEvent = Schemas['WebhookEndpointTestEvent'];

/** What a webhook delivery's body is: one member per entry of the document's `webhooks`, narrowed by `type`. */
export type WebhookEvent = {
  [T in keyof webhooks]: webhooks[T]['post']['requestBody']['content']['application/json'];
}[keyof webhooks];

export type EventTypeName = WebhookEvent['type'];

export type ListCallsParams = QueryOf<'listCalls'>;
export type ListJobsParams = QueryOf<'listJobs'>;
export type ListEventsParams = QueryOf<'listEvents'>;
export type EventFeedParams = QueryOf<'getEventFeed'>;
export type ListDeliveriesParams = QueryOf<'listWebhookEndpointDeliveries'>;
export type ListPortalSessionsParams = QueryOf<'listPortalSessions'>;
export type ApproveJobParams = BodyOf<'approveJob'>;
export type DeclineJobParams = BodyOf<'declineJob'>;
export type UpdateShopParams = BodyOf<'updateShop'>;
export type CreateWebhookEndpointParams = BodyOf<'createWebhookEndpoint'>;
export type UpdateWebhookEndpointParams = BodyOf<'updateWebhookEndpoint'>;
export type RecoverWebhookEndpointParams = BodyOf<'recoverWebhookEndpoint'>;
export type RedeliverEventParams = BodyOf<'redeliverEvent'>;
export type CreatePortalSessionParams = BodyOf<'createPortalSession'>;
