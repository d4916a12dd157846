import * as z from 'zod/mini';
import { DELIVERY_STATUSES } from '../delivery/status';
import { pageQuery } from './pagination-schema';

/** Request schemas of the operations in ./endpoint-lifecycle.ts (recover's are in ./recovery-schema.ts). */
export const listWebhookEndpointDeliveriesQuery = z.strictObject({
  ...pageQuery,
  status: z.optional(z.enum(DELIVERY_STATUSES)),
});
