import type { Context } from 'aws-lambda';
import middy from '@middy/core';
import * as z from 'zod';
import type { Principal } from '../domain/api-keys';
import { logger } from '../logger';
import { routeById } from '../routes';
import { loadCursorSecret } from './cursor';
import { asAppError } from './errors';
import { requestIdOf, type ApiEvent } from './event';
import { idempotent } from './idempotency';
import { authorize, requestBody, validateInput } from './middleware';
import { errorResult, jsonResult, withCommonHeaders, type HttpResult } from './response';

export interface OperationInput<B, Q> {
  principal: Principal;
  body: B;
  query: Q;
  pathParameters: Record<string, string>;
  requestId: string;
}

export interface Reply {
  status: number;
  body: unknown;
}

const noFields = z.strictObject({});

type Handler<E> = (event: E, context: Context) => Promise<HttpResult>;

/**
 * Outside the middleware chain on purpose: middy skips `after` middlewares when a `before`
 * answers early (an idempotent replay), yet every response, replays and errors included,
 * needs its Request-Id and the contract's error body.
 */
export function envelope<E extends { requestContext?: { requestId?: string } }>(inner: Handler<E>): Handler<E> {
  return async (event, context) => {
    const requestId = requestIdOf(event);
    let result: HttpResult;
    try {
      result = await inner(event, context);
    } catch (err) {
      const appError = asAppError(err);
      if (appError.code === 'internal_error') logger.error('Unhandled error', { request_id: requestId, error: err as Error });
      result = errorResult(appError, requestId);
    }
    return withCommonHeaders(result, requestId);
  };
}

/**
 * A /v1 operation: authorize → body rules → validation → Idempotency-Key (when the route
 * accepts it) → `run`, which calls the domain and says what to answer.
 */
/** An operation's request schemas (validated) and its success response (documented, and checked by the e2e tests). */
export interface OperationSpec<BS extends z.ZodType, QS extends z.ZodType> {
  body?: BS;
  query?: QS;
  response: z.ZodType;
  /** Success status (default 200). */
  status?: number;
}

export function apiHandler<BS extends z.ZodType = typeof noFields, QS extends z.ZodType = typeof noFields>(
  operationId: string,
  schemas: OperationSpec<BS, QS>,
  run: (input: OperationInput<z.output<BS>, z.output<QS>>) => Promise<Reply>,
): Handler<ApiEvent> {
  const route = routeById(operationId);
  const pipeline = middy<ApiEvent, HttpResult>()
    .use(authorize(route))
    .use({ before: () => loadCursorSecret() })
    .use(route.write ? [requestBody()] : [])
    .use(validateInput({ body: schemas.body ?? noFields, query: schemas.query ?? noFields }))
    .use(route.idempotent ? [idempotent()] : [])
    .handler(async (event) => {
      const reply = await run({
        principal: event.principal as Principal,
        body: event.input?.body as z.output<BS>,
        query: event.input?.query as z.output<QS>,
        pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
        requestId: requestIdOf(event),
      });
      return jsonResult(reply.status, reply.body);
    });
  return envelope(pipeline);
}
