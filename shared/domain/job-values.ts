/** A job's statuses, apart from ./jobs.ts, so the resource schemas can name them without importing the job logic. */
export const JOB_STATUSES = ['pending', 'approved', 'declined', 'completed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
