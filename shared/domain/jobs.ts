import { AppError, notFound } from '../errors';
import { newId } from '../ids';
import type { JobInput } from './call-ingest-schema';
import { findExisting } from './lookup';
import type { JobStatus } from './job-values';
import { isOwnWrite, type WriteOptions } from './writes';
import { newEvent, type EventRecord } from './events';
import { mapPage, type Page, type PageRequest, type TimeFilter } from './pagination';
import type { Resource } from './resources';
import type { Shop } from './shop';

export { JOB_STATUSES, type JobStatus } from './job-values';

export interface JobRecord extends JobInput {
  id: string;
  shop_id: string;
  version: number;
  status: JobStatus;
  call_id: string | null;
  created_at: string;
  updated_at: string;
  decided_at: string | null;
  decline_reason: string | null;
  /** The write token of the request that decided the job (never shown): its retry knows its own decision. */
  decided_by?: string;
}

export type DecideOutcome = { ok: true } | { ok: false; current: JobRecord | null };

export interface JobStore {
  get(shopId: string, jobId: string): Promise<JobRecord | null>;
  list(shopId: string, page: PageRequest, status?: JobStatus, time?: TimeFilter): Promise<Page<JobRecord>>;
  /**
   * Writes `next` and its event in one transaction, only if the stored job still has
   * `expectedVersion` and is pending. On refusal returns the job as it now is (as the
   * refusal found it, so a retried write that meets its own decision sees it).
   */
  decide(next: JobRecord, expectedVersion: number, event: EventRecord): Promise<DecideOutcome>;
}

export interface JobDeps {
  jobs: JobStore;
  now: () => Date;
}

/** A job created from a call: pending, or approved at once when the shop books automatically. */
export function newJob(shop: Shop, callId: string | null, input: JobInput, now: Date): JobRecord {
  const autoBooked = shop.booking_mode === 'auto_book';
  return {
    id: newId('job', now.getTime()),
    shop_id: shop.id,
    version: 1,
    status: autoBooked ? 'approved' : 'pending',
    call_id: callId,
    ...input,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    decided_at: autoBooked ? now.toISOString() : null,
    decline_reason: null,
  };
}

export function toJobResource(j: JobRecord): Resource<'job'> {
  return {
    id: j.id,
    object: 'job' as const,
    version: j.version,
    status: j.status,
    call_id: j.call_id,
    customer: j.customer,
    service: j.service,
    description: j.description,
    urgency: j.urgency,
    requested_window: j.requested_window,
    created_at: j.created_at,
    updated_at: j.updated_at,
    decided_at: j.decided_at,
    decline_reason: j.decline_reason,
  };
}

export async function getJob(deps: Pick<JobDeps, 'jobs'>, shopId: string, id: string) {
  return toJobResource(await findExisting('job', 'job', id, (jobId) => deps.jobs.get(shopId, jobId)));
}

export async function listJobs(
  deps: Pick<JobDeps, 'jobs'>,
  shopId: string,
  page: PageRequest,
  filter: { status?: JobStatus; time?: TimeFilter } = {},
) {
  return mapPage(await deps.jobs.list(shopId, page, filter.status, filter.time), toJobResource);
}

/** Version first: a client holding a stale version learns the current one, whatever the status. */
function refusal(job: JobRecord, version: number): AppError | null {
  if (job.version !== version) {
    return new AppError('version_conflict', `Job version is ${job.version}, not ${version}; fetch the job and retry.`, {
      param: 'version',
      extra: { current_version: job.version },
    });
  }
  if (job.status !== 'pending') {
    return new AppError('invalid_state', `Job is ${job.status}; only pending jobs can be approved or declined.`);
  }
  return null;
}

const MAX_ATTEMPTS = 5;

/** A decision on a job: its new status (and why it is declined), taken on the version the client saw. */
interface Decision {
  version: number;
  status: 'approved' | 'declined';
  decline_reason: string | null;
}

async function decide(deps: JobDeps, shopId: string, id: string, decision: Decision, options: WriteOptions) {
  const { version, ...change } = decision;
  let job: JobRecord | null = await findExisting('job', 'job', id, (jobId) => deps.jobs.get(shopId, jobId));
  for (let attempt = 1; ; attempt++) {
    if (!job) throw notFound('job', id);
    // This request's own decision, made by an attempt whose answer was lost: it stands.
    if (
      isOwnWrite(options, job.decided_by, job.decided_at, deps.now()) &&
      job.status === change.status &&
      job.version === version + 1
    )
      return toJobResource(job);
    const refused = refusal(job, version);
    if (refused) throw refused;
    const now = deps.now().toISOString();
    const next: JobRecord = {
      ...job,
      ...change,
      version: job.version + 1,
      updated_at: now,
      decided_at: now,
      ...(options.writeToken ? { decided_by: options.writeToken } : {}),
    };
    const event = newEvent(
      shopId,
      change.status === 'approved' ? 'job.approved' : 'job.declined',
      toJobResource(next),
      new Date(now),
    );
    const outcome = await deps.jobs.decide(next, version, event);
    if (outcome.ok) return toJobResource(next);
    // Refused: the job changed (someone else won) or a concurrent transaction collided.
    // Re-check against what is stored now; only a collision on an unchanged job retries.
    job = outcome.current;
    if (attempt >= MAX_ATTEMPTS)
      throw new AppError('version_conflict', 'The job is being changed concurrently; retry.', {
        extra: { current_version: job?.version ?? null },
      });
    await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
  }
}

/** The request's body: the job version the client decided on, and, to decline, why (optional). */
export interface JobDecision {
  version: number;
  reason?: string;
}

export const approveJob = (
  deps: JobDeps,
  shopId: string,
  id: string,
  { version }: Pick<JobDecision, 'version'>,
  options: WriteOptions = {},
) => decide(deps, shopId, id, { version, status: 'approved', decline_reason: null }, options);

export const declineJob = (
  deps: JobDeps,
  shopId: string,
  id: string,
  { version, reason }: JobDecision,
  options: WriteOptions = {},
) => decide(deps, shopId, id, { version, status: 'declined', decline_reason: reason ?? null }, options);
