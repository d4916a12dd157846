import * as z from 'zod/mini';
import { EVENT_TYPES } from './event-types';
import { createdQuery, pageQuery } from './pagination-schema';

/** Request schemas of the operations in ./event-log.ts. */
export const listEventsQuery = z.strictObject({ ...pageQuery, ...createdQuery, type: z.optional(z.enum(EVENT_TYPES)) });
