import * as z from 'zod';
import { EVENT_TYPES } from './event-types';
import { pageQuery } from './pagination-schema';

/** Request schemas of the operations in ./event-log.ts. */
export const listEventsQuery = z.strictObject({ ...pageQuery, type: z.enum(EVENT_TYPES).optional() });
