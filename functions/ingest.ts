import { AppError } from '../shared/errors';
import { callIngestSchema } from '../shared/domain/call-ingest-schema';
import { ingestCall, type CallDeps, type IngestResult } from '../shared/domain/calls';
import { parseOrThrow } from '../shared/http/validation';
import { logger, withLambdaContext } from '../shared/logger';
import { callDeps } from '../shared/wiring/api';
import { lambdaDeps } from '../shared/wiring/memo';

export type IngestResponse = { ok: true; result: IngestResult } | { ok: false; error: { code: string; message: string; param: string | null } };

/**
 * Internal ingest, invoked directly (lambda:InvokeFunction, IAM-authenticated) by the voice
 * platform with one finished call; not on the public API. Answers a result instead of
 * throwing for bad input, so the caller can tell "fix your payload" from "retry".
 * Retrying with the same external_id is safe: a recorded call is not recorded twice.
 */
export const makeHandler =
  (deps: () => CallDeps = lambdaDeps(callDeps)) =>
  withLambdaContext(async (event: unknown): Promise<IngestResponse> => {
    try {
      const input = parseOrThrow(callIngestSchema, event);
      return { ok: true, result: await ingestCall(deps(), input) };
    } catch (err) {
      // Anything but a validation or lookup error is a failure the caller should retry.
      if (!(err instanceof AppError)) throw err;
      // `message` is a reserved key of the log line (it was dropped, with a warning line of its own).
      logger.warn('Ingest refused', { code: err.code, reason: err.message });
      return { ok: false, error: { code: err.code, message: err.message, param: err.options.param ?? null } };
    }
  });

export const handler = makeHandler();
