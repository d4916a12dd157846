import * as z from 'zod/mini';

/** Request schemas of the redeliver operation (../delivery/redeliver.ts). */
export const redeliverEventBody = z.strictObject({
  endpoint_ids: z.optional(z.array(z.string()).check(z.maxLength(16))),
});
