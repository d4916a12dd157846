import type { Context } from 'aws-lambda';
import middy, { type MiddlewareObj } from '@middy/core';
import * as z from 'zod/mini';
import type { Principal } from '../domain/api-keys';
import { routeById } from '../routes';
import { envelope, type Handler } from './envelope';
import { requestIdOf, type ApiEvent } from './event';
import { authorize, requestBody, validateInput } from './middleware';
import { jsonResult, type HttpResult } from './response';

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

/** An operation's request schemas, validated before `run`; its success response is in lib/openapi/responses.ts. */
export interface OperationSpec<BS extends z.core.$ZodType, QS extends z.core.$ZodType> {
  body?: BS;
  query?: QS;
}

/** What an operation adds to the common chain. Each is imported only by the operations that use it, so the others bundle without it. */
export interface OperationOptions {
  /** Required exactly on the routes that accept an Idempotency-Key (`idempotent()` from ./idempotency). */
  idempotency?: MiddlewareObj<ApiEvent, HttpResult, Error, Context, Record<string, unknown>>;
}

/**
 * A /v1 operation: authorize → body rules → validation → Idempotency-Key (when the route
 * accepts it) → `run`, which calls the domain and says what to answer.
 */
export function apiHandler<BS extends z.core.$ZodType = typeof noFields, QS extends z.core.$ZodType = typeof noFields>(
  operationId: string,
  schemas: OperationSpec<BS, QS>,
  run: (input: OperationInput<z.output<BS>, z.output<QS>>) => Promise<Reply>,
  options: OperationOptions = {},
): Handler<ApiEvent> {
  const route = routeById(operationId);
  if (route.idempotent !== (options.idempotency !== undefined)) {
    throw new Error(`${operationId}: the route table says idempotent=${route.idempotent}; pass the idempotency middleware exactly when it is true`);
  }
  const pipeline = middy<ApiEvent, HttpResult>()
    .use(authorize(route))
    .use(route.write ? [requestBody()] : [])
    .use(validateInput({ body: schemas.body ?? noFields, query: schemas.query ?? noFields }))
    .use(options.idempotency ? [options.idempotency] : [])
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
