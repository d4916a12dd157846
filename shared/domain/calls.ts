import { newId } from '../ids';
import { AppError, notFound } from '../errors';
import type { CallIngest, CallOutcome } from './call-ingest-schema';
import { findExisting, requireId } from './lookup';
import { newEvent, type EventRecord } from './events';
import { newJob, toJobResource, type JobRecord } from './jobs';
import { mapPage, type Page, type PageRequest, type TimeFilter } from './pagination';
import type { Resource } from './resources';
import type { ShopStore } from './shop';

export interface CallRecord {
  id: string;
  shop_id: string;
  external_id: string;
  direction: 'inbound';
  status: 'in_progress' | 'completed' | 'missed' | 'failed';
  from_number: string;
  to_number: string;
  caller_name: string | null;
  started_at: string;
  ended_at: string | null;
  duration_seconds: number | null;
  outcome: CallOutcome | null;
  created_at: string;
}
export interface TranscriptRecord {
  call_id: string;
  turns: { index: number; speaker: 'agent' | 'caller'; text: string; offset_ms: number }[];
}
export interface SummaryRecord {
  call_id: string;
  summary: string;
  outcome: CallOutcome;
  details: NonNullable<CallIngest['summary']>['details'];
  usage: { credits: number; billable_seconds: number };
}

/** Everything one ingest writes, in one transaction. */
export interface CallBatch {
  shopId: string;
  call: CallRecord;
  transcript: TranscriptRecord | null;
  summary: SummaryRecord | null;
  jobs: JobRecord[];
  events: EventRecord[];
  credits: number;
}

/**
 * A part of the batch that is too large for the store to hold in one item, so the batch can
 * never be written: `param` is its field in the ingest payload (null when the store cannot
 * tell which), `bytes` its size as stored (null when unmeasured) and `limit` the most allowed.
 */
export interface TooLarge {
  status: 'too_large';
  param: string | null;
  bytes: number | null;
  limit: number;
}

export interface CallStore {
  /** Writes the batch atomically; `duplicate` with the existing id when external_id was seen. */
  record(
    batch: CallBatch,
  ): Promise<{ status: 'created' } | { status: 'duplicate'; callId: string } | { status: 'shop_missing' } | TooLarge>;
  get(shopId: string, callId: string): Promise<CallRecord | null>;
  getTranscript(shopId: string, callId: string): Promise<TranscriptRecord | null>;
  getSummary(shopId: string, callId: string): Promise<SummaryRecord | null>;
  list(shopId: string, page: PageRequest, time?: TimeFilter): Promise<Page<CallRecord>>;
}

export interface CallDeps {
  calls: CallStore;
  shops: ShopStore;
  now: () => Date;
}

export function toCallResource(c: CallRecord): Resource<'call'> {
  return {
    id: c.id,
    object: 'call' as const,
    direction: c.direction,
    status: c.status,
    from_number: c.from_number,
    to_number: c.to_number,
    caller_name: c.caller_name,
    started_at: c.started_at,
    ended_at: c.ended_at,
    duration_seconds: c.duration_seconds,
    outcome: c.outcome,
    created_at: c.created_at,
  };
}

export interface IngestResult {
  call_id: string;
  job_ids: string[];
  event_ids: string[];
  duplicate: boolean;
}

/** The payload's field, not a path id: the sender fixes `shop_id` (or redrives once the shop exists). */
const unknownShop = (shopId: string) =>
  new AppError('resource_missing', `No such shop: '${shopId}'`, { param: 'shop_id' });

/** Bad input, as a redrive of the same call would fail the same way: the sender has to make it smaller. */
function tooLarge({ param, bytes, limit }: TooLarge): AppError {
  const size = bytes === null ? '' : ` (${bytes} bytes)`;
  const message = param
    ? `Invalid ${param}: is too large to store${size}; an item holds at most ${limit} bytes (UTF-8)`
    : `The call is too large to store${size}; an item holds at most ${limit} bytes (UTF-8)`;
  return new AppError('parameter_invalid', message, param ? { param } : {});
}

/** Records a finished call with its transcript, summary, jobs, credit debit and events, atomically. */
export async function ingestCall(deps: CallDeps, input: CallIngest): Promise<IngestResult> {
  const shop = await deps.shops.get(input.shop_id);
  if (!shop) throw unknownShop(input.shop_id);
  const now = deps.now();
  const callId = newId('call', now.getTime());
  const call: CallRecord = {
    id: callId,
    shop_id: shop.id,
    external_id: input.external_id,
    direction: 'inbound',
    status: input.status,
    from_number: input.from_number,
    to_number: input.to_number,
    caller_name: input.caller_name,
    started_at: input.started_at,
    ended_at: input.ended_at,
    duration_seconds: Math.round((Date.parse(input.ended_at) - Date.parse(input.started_at)) / 1000),
    outcome: input.summary?.outcome ?? null,
    created_at: now.toISOString(),
  };
  const jobs = input.jobs.map((job) => newJob(shop, callId, job, now));
  const events = [
    ...(call.status === 'completed' ? [newEvent(shop.id, 'call.completed', toCallResource(call), now)] : []),
    ...jobs.map((job) => newEvent(shop.id, 'job.created', toJobResource(job), now)),
  ];
  const batch: CallBatch = {
    shopId: shop.id,
    call,
    transcript:
      input.transcript.length > 0
        ? { call_id: callId, turns: input.transcript.map((t, index) => ({ index, ...t })) }
        : null,
    summary: input.summary ? { call_id: callId, ...input.summary } : null,
    jobs,
    events,
    credits: input.summary?.usage.credits ?? 0,
  };
  const outcome = await deps.calls.record(batch);
  if (outcome.status === 'shop_missing') throw unknownShop(input.shop_id);
  if (outcome.status === 'too_large') throw tooLarge(outcome);
  if (outcome.status === 'duplicate') return { call_id: outcome.callId, job_ids: [], event_ids: [], duplicate: true };
  return { call_id: callId, job_ids: jobs.map((j) => j.id), event_ids: events.map((e) => e.id), duplicate: false };
}

const callIdOrThrow = (id: string) => requireId('call', 'call', id);

export async function getCall(deps: Pick<CallDeps, 'calls'>, shopId: string, id: string) {
  return toCallResource(await findExisting('call', 'call', id, (callId) => deps.calls.get(shopId, callId)));
}

export async function getTranscript(
  deps: Pick<CallDeps, 'calls'>,
  shopId: string,
  id: string,
): Promise<Resource<'transcript'>> {
  const transcript = await deps.calls.getTranscript(shopId, callIdOrThrow(id));
  if (!transcript) throw await missingPart(deps, shopId, id, 'transcript');
  return { object: 'transcript' as const, call_id: transcript.call_id, turns: transcript.turns };
}

export async function getSummary(
  deps: Pick<CallDeps, 'calls'>,
  shopId: string,
  id: string,
): Promise<Resource<'callSummary'>> {
  const s = await deps.calls.getSummary(shopId, callIdOrThrow(id));
  if (!s) throw await missingPart(deps, shopId, id, 'summary');
  return {
    object: 'call_summary' as const,
    call_id: s.call_id,
    summary: s.summary,
    outcome: s.outcome,
    details: s.details,
    usage: s.usage,
  };
}

/** A missing resource that says whether the call is unknown or just has no transcript/summary (yet). */
async function missingPart(deps: Pick<CallDeps, 'calls'>, shopId: string, id: string, part: string): Promise<AppError> {
  const call = await deps.calls.get(shopId, id);
  return call
    ? new AppError('resource_missing', `Call '${id}' has no ${part}.`, { param: 'id' })
    : notFound('call', id);
}

export async function listCalls(
  deps: Pick<CallDeps, 'calls'>,
  shopId: string,
  page: PageRequest,
  time: TimeFilter = {},
) {
  return mapPage(await deps.calls.list(shopId, page, time), toCallResource);
}
