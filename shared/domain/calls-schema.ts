import * as z from 'zod';
import { pageQuery } from './pagination-schema';

/** Request schemas of the operations in ./calls.ts, and the payload of call ingest. */
export const listCallsQuery = z.strictObject(pageQuery);

export const CALL_OUTCOMES = ['job_created', 'message_taken', 'emergency_escalated', 'information_provided', 'spam', 'no_action'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];
export const URGENCIES = ['emergency', 'urgent', 'routine'] as const;
/** Ingest records finished calls; `in_progress` exists in the contract for calls still running. */
export const INGESTED_CALL_STATUSES = ['completed', 'missed', 'failed'] as const;

const e164 = z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +15551234567');
const isoTime = z.iso.datetime({ offset: true }).transform((v) => new Date(v).toISOString());
const text = (max: number) => z.string().trim().min(1).max(max);

export const jobInputSchema = z.strictObject({
  customer: z.strictObject({ name: text(200).nullable(), phone: e164.nullable(), address: text(500).nullable() }),
  service: text(200),
  description: text(4000),
  urgency: z.enum(URGENCIES),
  requested_window: z
    .strictObject({ start: isoTime, end: isoTime })
    .refine((w) => w.start < w.end, { message: 'start must be before end', path: ['end'] })
    .nullable(),
});
export type JobInput = z.output<typeof jobInputSchema>;

/** What the voice platform sends for one finished call (internal ingest, not the public API). */
export const callIngestSchema = z
  .strictObject({
    shop_id: z.string(),
    /** The voice platform's own call id: a retried ingest with the same id records nothing new. */
    external_id: text(200),
    status: z.enum(INGESTED_CALL_STATUSES),
    from_number: e164,
    to_number: e164,
    caller_name: text(200).nullable(),
    started_at: isoTime,
    ended_at: isoTime,
    transcript: z
      .array(z.strictObject({ speaker: z.enum(['agent', 'caller']), text: text(5000), offset_ms: z.number().int().min(0) }))
      .max(2000)
      .default([]),
    summary: z
      .strictObject({
        summary: text(4000),
        outcome: z.enum(CALL_OUTCOMES),
        details: z.strictObject({
          caller_name: text(200).nullable(),
          callback_number: e164.nullable(),
          service_requested: text(200).nullable(),
          address: text(500).nullable(),
          urgency: z.enum(URGENCIES).nullable(),
        }),
        usage: z.strictObject({ credits: z.number().int().min(0).max(10000), billable_seconds: z.number().int().min(0) }),
      })
      .nullable()
      .default(null),
    jobs: z.array(jobInputSchema).max(5).default([]),
  })
  .superRefine((call, ctx) => {
    if (call.ended_at < call.started_at) ctx.addIssue({ code: 'custom', path: ['ended_at'], message: 'must not be before started_at' });
    // A transcript item must stay under DynamoDB's 400 KB item limit.
    if (JSON.stringify(call.transcript).length > 350_000) ctx.addIssue({ code: 'custom', path: ['transcript'], message: 'is larger than 350 KB' });
  });
export type CallIngest = z.output<typeof callIngestSchema>;
