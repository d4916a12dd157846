import * as z from 'zod/mini';

/** Request schemas of the operation in ../delivery/recovery.ts. */
const timestamp = z.iso.datetime({ message: 'must be an ISO 8601 UTC timestamp such as 2026-11-21T18:04:05.123Z' });
export const recoverWebhookEndpointBody = z.strictObject({ since: timestamp, until: z.optional(timestamp) });
export type RecoverInput = z.output<typeof recoverWebhookEndpointBody>;
