import * as z from 'zod/mini';

/** Request schemas of the operations in ../delivery/deliveries.ts. */
export const redeliverEventBody = z.strictObject({
  endpoint_ids: z.optional(z.array(z.string()).check(z.maxLength(16))),
});
