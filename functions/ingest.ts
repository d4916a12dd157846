import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import type { IngestDeadLetters } from '../shared/aws/sqs-dead-letters';
import { batchHandler, type BatchResponse } from '../shared/batch';
import { AppError } from '../shared/errors';
import { callIngestSchema } from '../shared/domain/call-ingest-schema';
import { ingestCall, type CallDeps, type IngestResult } from '../shared/domain/calls';
import { jsonKind } from '../shared/http/json-input';
import { parseOrThrow } from '../shared/http/validation';
import { logger, withLambdaContext } from '../shared/logger';
import { callDeps } from '../shared/wiring/api';
import { lambdaDeps } from '../shared/wiring/memo';
import { ingestDeadLetterDeps } from '../shared/wiring/pipeline';

type Refusal = { code: string; message: string; param: string | null };
type IngestResponse = { ok: true; result: IngestResult } | { ok: false; error: Refusal };
export type IngestDeps = CallDeps & { ingestDeadLetters: IngestDeadLetters };

/** One handler, two event shapes: an SQS batch from the ingest queue, or one call invoked directly. */
interface IngestHandler {
  (event: SQSEvent, context?: Context): Promise<BatchResponse>;
  (event: unknown, context?: Context): Promise<IngestResponse>;
}

const refusal = (err: AppError): Refusal => ({
  code: err.code,
  message: err.message,
  param: err.options.param ?? null,
});

/**
 * Validates and records one call. Bad input (it could never succeed) throws an AppError; anything
 * else is worth retrying.
 */
const ingest = (deps: CallDeps, payload: unknown): Promise<IngestResult> =>
  ingestCall(deps, parseOrThrow(callIngestSchema, payload));

function parseBody(body: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body) as unknown;
  } catch {
    throw new AppError('invalid_json', 'The message body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new AppError('invalid_json', `The message body must be a JSON object ({...}), not ${jsonKind(parsed)}`);
  return parsed;
}

/**
 * One message of the ingest queue. Refused (not JSON, not a valid call, an unknown shop, a call
 * too large to store): set aside in the dead-letter queue at once, with the reason, and reported
 * done, so it neither blocks the queue nor comes back five times. Any other failure (the table)
 * rejects, so SQS delivers the message again after its visibility timeout, and after 5 receives
 * moves it to the same dead-letter queue. Redelivery is safe: a call already recorded under its
 * external_id is not recorded twice. Ids and codes only in the logs: the body holds callers'
 * numbers and words.
 */
async function ingestMessage(deps: IngestDeps, record: SQSRecord): Promise<void> {
  const message_id = record.messageId;
  let result: IngestResult;
  try {
    result = await ingest(deps, parseBody(record.body));
  } catch (err) {
    if (!(err instanceof AppError)) {
      logger.error('Ingest failed; the message comes back after its visibility timeout', {
        message_id,
        error: err as Error,
      });
      throw err;
    }
    const error = refusal(err);
    logger.warn('Ingest refused; message set aside in the dead-letter queue', {
      message_id,
      code: error.code,
      reason: error.message,
      param: error.param,
    });
    await deps.ingestDeadLetters
      .setAside({ messageId: message_id, body: record.body, error })
      .catch((setAsideErr: unknown) => {
        logger.error('Could not set the refused message aside; it comes back after its visibility timeout', {
          message_id,
          error: setAsideErr as Error,
        });
        throw setAsideErr;
      });
    return;
  }
  logger.info('Call ingested', { message_id, call_id: result.call_id, duplicate: result.duplicate });
}

const isQueueBatch = (event: unknown): event is SQSEvent => {
  const records = (event as { Records?: unknown } | null)?.Records;
  return (
    Array.isArray(records) && records.length > 0 && (records[0] as { eventSource?: unknown }).eventSource === 'aws:sqs'
  );
};

/**
 * The voice platform's way in, not on the public API. From the ingest queue (its normal path):
 * one call per message body, each message settled on its own (partial batch response). Invoked
 * directly (lambda:InvokeFunction, IAM-authenticated): answers a result instead of throwing for
 * bad input, so the caller can tell "fix your payload" from "retry". Either way, sending the same
 * external_id again is safe: a recorded call is not recorded twice.
 */
export const makeHandler = (deps: () => IngestDeps = lambdaDeps(callDeps, ingestDeadLetterDeps)): IngestHandler => {
  const queueBatch = batchHandler({
    name: 'Ingest',
    id: (record: SQSRecord) => record.messageId,
    read: (record: SQSRecord) => record,
    process: (records) => Promise.allSettled(records.map((record) => ingestMessage(deps(), record))),
  });
  const direct = async (event: unknown): Promise<IngestResponse> => {
    try {
      return { ok: true, result: await ingest(deps(), event) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // `message` is a reserved key of the log line: the logger would drop it, with a warning line of its own.
      logger.warn('Ingest refused', { code: err.code, reason: err.message });
      return { ok: false, error: refusal(err) };
    }
  };
  return withLambdaContext(async (event: unknown) =>
    isQueueBatch(event) ? queueBatch(event) : direct(event),
  ) as IngestHandler;
};

export const handler = makeHandler();
