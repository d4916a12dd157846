import * as z from 'zod';
import { SUBSCRIBABLE_EVENT_TYPES } from './event-types';

const ALLOWED = [...SUBSCRIBABLE_EVENT_TYPES, '*'] as const;

/** A non-empty list of subscribable types or "*"; duplicates dropped, "*" absorbs the rest. */
const eventsSchema = z
  .array(z.enum(ALLOWED, { error: `must be one of ${ALLOWED.join(', ')}` }))
  .min(1, 'must list at least one event type')
  .max(ALLOWED.length * 2)
  .transform((events) => (events.includes('*') ? ['*'] : [...new Set(events)]));

const description = z.string().trim().max(500).nullable();

export const createWebhookEndpointBody = z.strictObject({
  url: z.string(),
  events: eventsSchema,
  description: description.optional(),
});
export type CreateEndpointInput = z.output<typeof createWebhookEndpointBody>;

export const updateWebhookEndpointBody = z
  .strictObject({ url: z.string(), events: eventsSchema, description, enabled: z.boolean() })
  .partial();
export type UpdateEndpointInput = z.output<typeof updateWebhookEndpointBody>;
