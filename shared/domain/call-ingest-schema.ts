import * as z from 'zod/mini';

/** The payload of call ingest (internal, not the public API), and the values it shares with the call resources. */
export const CALL_OUTCOMES = [
  'job_created',
  'message_taken',
  'emergency_escalated',
  'information_provided',
  'spam',
  'no_action',
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];
export const URGENCIES = ['emergency', 'urgent', 'routine'] as const;
/** Ingest records finished calls; `in_progress` exists in the contract for calls still running. */
export const INGESTED_CALL_STATUSES = ['completed', 'missed', 'failed'] as const;

const e164 = z.string().check(z.regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +15551234567'));
const isoTime = z.pipe(
  z.iso.datetime({ offset: true }),
  z.transform((v: string) => new Date(v).toISOString()),
);
const text = (max: number) => z.string().check(z.trim(), z.minLength(1), z.maxLength(max));

/** A transcript's bound as UTF-8 JSON: with its keys, the stored transcript item stays under DynamoDB's 400 KB. */
export const TRANSCRIPT_MAX_BYTES = 350_000;
const utf8Bytes = (value: string) => new TextEncoder().encode(value).length;

export const jobInputSchema = z.strictObject({
  customer: z.strictObject({ name: z.nullable(text(200)), phone: z.nullable(e164), address: z.nullable(text(500)) }),
  service: text(200),
  description: text(4000),
  urgency: z.enum(URGENCIES),
  requested_window: z.nullable(
    z
      .strictObject({ start: isoTime, end: isoTime })
      .check(z.refine((w) => w.start < w.end, { message: 'start must be before end', path: ['end'] })),
  ),
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
    caller_name: z.nullable(text(200)),
    started_at: isoTime,
    ended_at: isoTime,
    transcript: z._default(
      z
        .array(
          z.strictObject({
            speaker: z.enum(['agent', 'caller']),
            text: text(5000),
            offset_ms: z.number().check(z.int(), z.minimum(0)),
          }),
        )
        .check(z.maxLength(2000)),
      [],
    ),
    summary: z._default(
      z.nullable(
        z.strictObject({
          summary: text(4000),
          outcome: z.enum(CALL_OUTCOMES),
          details: z.strictObject({
            caller_name: z.nullable(text(200)),
            callback_number: z.nullable(e164),
            service_requested: z.nullable(text(200)),
            address: z.nullable(text(500)),
            urgency: z.nullable(z.enum(URGENCIES)),
          }),
          usage: z.strictObject({
            credits: z.number().check(z.int(), z.minimum(0), z.maximum(10000)),
            billable_seconds: z.number().check(z.int(), z.minimum(0)),
          }),
        }),
      ),
      null,
    ),
    jobs: z._default(z.array(jobInputSchema).check(z.maxLength(5)), []),
  })
  .check(
    z.superRefine((call, ctx) => {
      if (call.ended_at < call.started_at)
        ctx.addIssue({ code: 'custom', path: ['ended_at'], message: 'must not be before started_at' });
      const bytes = utf8Bytes(JSON.stringify(call.transcript));
      if (bytes > TRANSCRIPT_MAX_BYTES)
        ctx.addIssue({
          code: 'custom',
          path: ['transcript'],
          message: `is ${bytes} bytes as JSON (UTF-8); at most ${TRANSCRIPT_MAX_BYTES}`,
        });
    }),
  );
export type CallIngest = z.output<typeof callIngestSchema>;
