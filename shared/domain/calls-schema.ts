import * as z from 'zod/mini';
import { createdQuery, pageQuery } from './pagination-schema';

/**
 * Request schemas of the operations in ./calls.ts. The payload of call ingest is in
 * ./call-ingest-schema.ts, so the list operation's bundle does not build it at init.
 */
export const listCallsQuery = z.strictObject({ ...pageQuery, ...createdQuery });
