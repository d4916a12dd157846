import * as z from 'zod/mini';
import { pageQuery } from './pagination-schema';

/** Request schemas of GET and POST /v1/portal-sessions (./portal-sessions.ts). */
export const listPortalSessionsQuery = z.strictObject({ ...pageQuery });

const EXPIRES_IN_MESSAGE = 'must be a whole number of seconds from 60 to 86400 (24 hours)';
export const createPortalSessionBody = z.strictObject({
  expires_in: z.optional(
    z
      .number(EXPIRES_IN_MESSAGE)
      .check(z.int(EXPIRES_IN_MESSAGE), z.minimum(60, EXPIRES_IN_MESSAGE), z.maximum(86400, EXPIRES_IN_MESSAGE)),
  ),
  read_only: z.optional(z.boolean('must be true or false')),
});
export type PortalSessionInput = z.output<typeof createPortalSessionBody>;
