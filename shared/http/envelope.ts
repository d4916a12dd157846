import type { Context } from 'aws-lambda';
import { logger } from '../logger';
import { asAppError } from './errors';
import { requestIdOf } from './event';
import { errorResult, withCommonHeaders, type HttpResult } from './response';

export type Handler<E> = (event: E, context: Context) => Promise<HttpResult>;

/**
 * Every HTTP response, replays and errors included, gets its Request-Id and the contract's
 * error body. Outside the middleware chain on purpose: middy skips `after` middlewares when
 * a `before` answers early (an idempotent replay). Its own module so the fallback function
 * bundles without the operation pipeline.
 */
export function envelope<E extends { requestContext?: { requestId?: string } }>(inner: Handler<E>): Handler<E> {
  return async (event, context) => {
    const requestId = requestIdOf(event);
    // Every log line of this invocation carries the function and its request (Powertools'
    // injectLambdaContext, without middy).
    if (context) logger.addContext(context);
    let result: HttpResult;
    try {
      result = await inner(event, context);
    } catch (err) {
      const appError = asAppError(err);
      if (appError.code === 'internal_error')
        logger.error('Unhandled error', { request_id: requestId, error: err as Error });
      result = errorResult(appError, requestId);
    }
    return withCommonHeaders(result, requestId);
  };
}
