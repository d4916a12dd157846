import * as z from 'zod/mini';
import { createdQuery, pageQuery, updatedQuery } from './pagination-schema';
import { JOB_STATUSES } from './job-values';

/** Request schemas of the operations in ./jobs.ts. */
export const listJobsQuery = z.strictObject({
  ...pageQuery,
  ...createdQuery,
  ...updatedQuery,
  status: z.optional(z.enum(JOB_STATUSES)),
});
const version = z.number().check(z.int(), z.minimum(1));
export const approveJobBody = z.strictObject({ version });
export const declineJobBody = z.strictObject({
  version,
  reason: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(500))),
});
