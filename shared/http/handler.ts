import { createHash } from 'node:crypto';
import type { Context } from 'aws-lambda';
import middy, { type MiddlewareObj } from '@middy/core';
import type * as z from 'zod/mini';
import type { Principal } from '../domain/api-keys';
import { routeById } from '../routes';
import { envelope, type Handler } from './envelope';
import { requestIdOf, type ApiEvent } from './event';
import { authorize, noInput, requestBody } from './middleware';
import { jsonResult, type HttpResult } from './response';

export interface OperationInput<B, Q> {
  principal: Principal;
  body: B;
  query: Q;
  pathParameters: Record<string, string>;
  requestId: string;
  /** Where the client reached the API (scheme and host, no path): links the API hands out start with it. */
  baseUrl: string;
  /**
   * With an Idempotency-Key, names this request's writes across the client's retries of it (the
   * key, the API key, method, path and body): a write can recognise its own earlier change.
   */
  writeToken?: string;
}

export interface Reply {
  status: number;
  body: unknown;
}

/**
 * The key's token for this exact request: another shop, API key, method, path or body under the
 * same header value is another request.
 */
function writeTokenOf(event: ApiEvent, idempotent: boolean): string | undefined {
  const key = idempotent ? event.headers['idempotency-key'] : undefined;
  if (key === undefined) return undefined;
  const parts = [
    event.principal?.shopId ?? null,
    event.principal?.keyId ?? null,
    key,
    event.requestContext?.http?.method ?? null,
    event.rawPath ?? null,
    event.jsonBody ?? null,
  ];
  return `idem_${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}`;
}

/**
 * The API's public origin as this request reached it: API Gateway names the domain it was
 * called on (its own or a custom one) and sets X-Forwarded-Proto (https); the local stack
 * does the same for its http:// address.
 */
function baseUrlOf(event: ApiEvent): string {
  const proto = event.headers?.['x-forwarded-proto'] === 'http' ? 'http' : 'https';
  return `${proto}://${event.requestContext.domainName}`;
}

/**
 * What the portal page may learn about the session it runs in, on every answer to a portal
 * session's token (the token cannot read the shop): docs/api.md, Portal sessions. The name is
 * percent-encoded UTF-8, as header values are ASCII.
 */
export function sessionHeaders(principal: Principal | undefined): Record<string, string> {
  const session = principal?.session;
  if (!session) return {};
  return {
    'portal-session-id': session.id,
    'portal-session-expires-at': session.expiresAt,
    'portal-session-read-only': String(session.readOnly),
    'portal-session-shop-name': encodeURIComponent(session.shopName),
  };
}

/** What an operation without input fields validates to. */
type NoFields = z.ZodMiniObject<Record<never, never>>;

/**
 * An operation's request schemas, validated before `run` by `validate` (made with them by
 * `requestSchemas` in ./validation.ts); `{}` for an operation that takes no input. Its
 * success response is in lib/openapi/responses.ts.
 */
export interface OperationSpec<BS extends z.core.$ZodType, QS extends z.core.$ZodType> {
  body?: BS;
  query?: QS;
  validate?: MiddlewareObj<ApiEvent, HttpResult>;
}

/**
 * What an operation adds to the common chain. Each is imported only by the operations that use it,
 * so the others bundle without it.
 */
export interface OperationOptions {
  /** Required exactly on the routes that accept an Idempotency-Key (`idempotent()` from ./idempotency). */
  idempotency?: MiddlewareObj<ApiEvent, HttpResult, Error, Context, Record<string, unknown>>;
}

/**
 * A /v1 operation: authorize → body rules → validation → Idempotency-Key (when the route
 * accepts it) → `run`, which calls the domain and says what to answer.
 */
export function apiHandler<BS extends z.core.$ZodType = NoFields, QS extends z.core.$ZodType = NoFields>(
  operationId: string,
  schemas: OperationSpec<BS, QS>,
  run: (input: OperationInput<z.output<BS>, z.output<QS>>) => Promise<Reply>,
  options: OperationOptions = {},
): Handler<ApiEvent> {
  const route = routeById(operationId);
  if (route.idempotent !== (options.idempotency !== undefined)) {
    throw new Error(
      `${operationId}: the route table says idempotent=${route.idempotent}; pass the idempotency ` +
        `middleware exactly when it is true`,
    );
  }
  if ((schemas.body !== undefined || schemas.query !== undefined) !== (schemas.validate !== undefined)) {
    throw new Error(`${operationId}: make its spec with requestSchemas(), which validates the schemas it names`);
  }
  const pipeline = middy<ApiEvent, HttpResult>()
    .use(authorize(route))
    .use(route.write ? [requestBody()] : [])
    .use(schemas.validate ?? noInput())
    .use(options.idempotency ? [options.idempotency] : [])
    .handler(async (event) => {
      const reply = await run({
        principal: event.principal as Principal,
        body: event.input?.body as z.output<BS>,
        query: event.input?.query as z.output<QS>,
        pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
        requestId: requestIdOf(event),
        baseUrl: baseUrlOf(event),
        writeToken: writeTokenOf(event, route.idempotent),
      });
      return jsonResult(reply.status, reply.body, sessionHeaders(event.principal));
    });
  return envelope(pipeline);
}
