import type { z } from 'zod';
import {
  callSchema,
  callSummarySchema,
  deletedPortalSessionSchema,
  deletedWebhookEndpointSchema,
  deliverySchema,
  eventSchema,
  eventTypeSchema,
  recoverySchema,
  webhookEndpointStatsSchema,
  eventWithDeliveriesSchema,
  jobSchema,
  keyProfileSchema,
  portalSessionSchema,
  portalSessionWithTokenSchema,
  shopSchema,
  transcriptSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from '../../shared/domain/resources';
import { eventFeedOf, listOf } from './envelopes';

export interface OperationResponse {
  schema: z.ZodType;
  /** Success status (default 200). */
  status?: number;
}

/**
 * What each operation answers on success: for the OpenAPI document and the e2e tests that
 * check responses against it. Kept apart from the handler files so the Lambda bundles do
 * not build schemas they never use (docs/performance.md).
 */
export const responses: Record<string, OperationResponse> = {
  approveJob: { schema: jobSchema },
  createPortalSession: { schema: portalSessionWithTokenSchema, status: 201 },
  createWebhookEndpoint: { schema: webhookEndpointWithSecretSchema, status: 201 },
  declineJob: { schema: jobSchema },
  deletePortalSession: { schema: deletedPortalSessionSchema },
  deleteWebhookEndpoint: { schema: deletedWebhookEndpointSchema },
  getCallSummary: { schema: callSummarySchema },
  getCallTranscript: { schema: transcriptSchema },
  getCall: { schema: callSchema },
  getEvent: { schema: eventWithDeliveriesSchema },
  getJob: { schema: jobSchema },
  getMe: { schema: keyProfileSchema },
  getShop: { schema: shopSchema },
  getWebhookEndpoint: { schema: webhookEndpointSchema },
  getWebhookEndpointStats: { schema: webhookEndpointStatsSchema },
  getWebhookEndpointRecovery: { schema: recoverySchema },
  listCalls: { schema: listOf(callSchema, 'Call') },
  listEvents: { schema: listOf(eventSchema, 'Event') },
  getEventFeed: { schema: eventFeedOf(eventSchema) },
  listEventTypes: { schema: listOf(eventTypeSchema, 'EventType') },
  listJobs: { schema: listOf(jobSchema, 'Job') },
  listPortalSessions: { schema: listOf(portalSessionSchema, 'PortalSession') },
  listWebhookEndpointDeliveries: { schema: listOf(deliverySchema, 'Delivery') },
  listWebhookEndpoints: { schema: listOf(webhookEndpointSchema, 'WebhookEndpoint') },
  recoverWebhookEndpoint: { schema: recoverySchema, status: 202 },
  redeliverEvent: { schema: eventWithDeliveriesSchema, status: 202 },
  rotateWebhookEndpointSecret: { schema: webhookEndpointWithSecretSchema },
  testWebhookEndpoint: { schema: eventSchema, status: 202 },
  updateShop: { schema: shopSchema },
  updateWebhookEndpoint: { schema: webhookEndpointSchema },
};
