import * as z from 'zod/mini';
import { eventFilterSchema } from './event-filter-schema';
import { SUBSCRIBABLE_EVENT_TYPES } from './event-types';

const ALLOWED = [...SUBSCRIBABLE_EVENT_TYPES, '*'] as const;

/** A non-empty list of subscribable types or "*"; duplicates dropped, "*" absorbs the rest. */
const eventsSchema = z.pipe(
  z
    .array(z.enum(ALLOWED, { error: `must be one of ${ALLOWED.join(', ')}` }))
    .check(z.minLength(1, 'must list at least one event type'), z.maxLength(ALLOWED.length * 2)),
  z.transform((events: (typeof ALLOWED)[number][]): string[] => (events.includes('*') ? ['*'] : [...new Set(events)])),
);

const description = z.nullable(z.string().check(z.trim(), z.maxLength(500)));

/**
 * Per resource: one resource's events (the same `data.id`) reach the endpoint in the order they
 * were created (../delivery/resource-order.ts).
 */
export const ENDPOINT_ORDERINGS = ['none', 'per_resource'] as const;
export type EndpointOrdering = (typeof ENDPOINT_ORDERINGS)[number];
const ordering = z.enum(ENDPOINT_ORDERINGS, { error: `must be one of ${ENDPOINT_ORDERINGS.join(', ')}` });
const RATE_LIMIT_MESSAGE = 'must be an integer from 1 to 1000, or null';
/** Requests per second to the endpoint (shared/delivery/rate-window.ts); null: the in-flight bound alone. */
const rateLimit = z.nullable(
  z
    .number({ error: RATE_LIMIT_MESSAGE })
    .check(z.int(RATE_LIMIT_MESSAGE), z.minimum(1, RATE_LIMIT_MESSAGE), z.maximum(1000, RATE_LIMIT_MESSAGE)),
);
z.globalRegistry.add(rateLimit, {
  description:
    'Requests per second to this endpoint, at most 1000: at most this many start in any ' +
    'one-second window. null (default): no limit but the in-flight one.',
});

export const createWebhookEndpointBody = z.strictObject({
  url: z.string(),
  events: eventsSchema,
  description: z.optional(description),
  filter: z.optional(z.nullable(eventFilterSchema)),
  ordering: z.optional(ordering),
  rate_limit: z.optional(rateLimit),
});
export type CreateEndpointInput = z.output<typeof createWebhookEndpointBody>;

export const updateWebhookEndpointBody = z.partial(
  z.strictObject({
    url: z.string(),
    events: eventsSchema,
    description,
    filter: z.nullable(eventFilterSchema),
    ordering,
    rate_limit: rateLimit,
    enabled: z.boolean(),
  }),
);
export type UpdateEndpointInput = z.output<typeof updateWebhookEndpointBody>;
