import * as z from 'zod';
import { pageQuery } from './pagination-schema';
import { JOB_STATUSES } from './jobs';

/** Request schemas of the operations in ./jobs.ts. */
export const listJobsQuery = z.strictObject({ ...pageQuery, status: z.enum(JOB_STATUSES).optional() });
export const approveJobBody = z.strictObject({ version: z.number().int().min(1) });
export const declineJobBody = z.strictObject({ version: z.number().int().min(1), reason: z.string().trim().min(1).max(500).optional() });
