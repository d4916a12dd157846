import * as z from 'zod/mini';
import { DELIVERY_STATUSES } from './delivery-status';
import { pageQuery } from './pagination-schema';

/** Request schemas of the operations in ./endpoint-lifecycle.ts and ./recovery.ts. */
export const listWebhookEndpointDeliveriesQuery = z.strictObject({ ...pageQuery, status: z.optional(z.enum(DELIVERY_STATUSES)) });

const timestamp = z.iso.datetime({ message: 'must be an ISO 8601 UTC timestamp such as 2026-11-21T18:04:05.123Z' });
export const recoverWebhookEndpointBody = z.strictObject({ since: timestamp, until: z.optional(timestamp) });
export type RecoverInput = z.output<typeof recoverWebhookEndpointBody>;
