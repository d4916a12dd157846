import * as z from 'zod';

/** Request schemas of the operations in ./deliveries.ts. */
export const redeliverEventBody = z.strictObject({ endpoint_ids: z.array(z.string()).max(16).optional() });
