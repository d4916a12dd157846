import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handler as fallback } from '../../functions/fallback';
import { handler as portal } from '../../functions/portal';
import { AppError } from '../../shared/errors';
import { requestIdOf } from '../../shared/http/event';
import { errorResult, withCommonHeaders } from '../../shared/http/response';
import { newId } from '../../shared/ids';
import { logger } from '../../shared/logger';
import { isPortalRequest, resolve, type Route } from '../../shared/routes';
import { invoke } from './invocations';
import { lambdaContext, toAuthorizerEvent, toProxyEvent } from './lambda-events';
import type { LocalHandlers } from './wiring';

/** API Gateway's own payload limit; the handlers enforce the contract's 64 KiB. */
const MAX_PAYLOAD = 10 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Who asked, for the access line: the authorizer's verdict when the route ran it. */
interface Caller {
  shop_id?: string;
  key_id?: string;
}

/** What API Gateway does for one request: match the route, run the authorizer, invoke the Lambda. */
async function dispatch(handlers: LocalHandlers, req: IncomingMessage, body: Buffer, url: URL, requestId: string, caller: Caller): Promise<APIGatewayProxyStructuredResultV2> {
  const method = req.method ?? 'GET';
  const resolution = resolve(method, url.pathname);
  const built: Route | null = resolution.kind === 'route' && resolution.route.handler ? resolution.route : null;
  const event = toProxyEvent(req, {
    method,
    url,
    body,
    routeKey: built ? `${built.method} ${built.path}` : '$default',
    requestId,
    pathParameters: built && resolution.kind === 'route' ? resolution.pathParameters : undefined,
  });
  // Public routes of their own (no authorizer), as in lib/constructs/api.ts.
  if (isPortalRequest(method, url.pathname)) return invoke(portal, event, lambdaContext('portal', event.requestContext.requestId));
  if (!built?.handler) return invoke(fallback, event, lambdaContext('fallback', event.requestContext.requestId));

  const verdict = await handlers.authorizer(toAuthorizerEvent(event));
  // API Gateway's own refusal (no route runs): its body, and its request id header only.
  if (!verdict.isAuthorized) return { statusCode: 403, headers: { 'apigw-requestid': requestId }, body: JSON.stringify({ message: 'Forbidden' }) };
  if (verdict.context.authenticated === true) Object.assign(caller, { shop_id: String(verdict.context.shop_id), key_id: String(verdict.context.key_id) });
  const authorized = { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: verdict.context } } };
  const handler = await handlers.operation(built.handler);
  return handler(authorized, lambdaContext(built.operationId, event.requestContext.requestId));
}

function write(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  res.writeHead(result.statusCode ?? 200, { ...(result.headers as Record<string, string>), 'content-length': body.length });
  res.end(body);
}

async function serve(handlers: LocalHandlers, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const url = new URL(req.url ?? '/', 'http://localhost');
  // One id per request from the start, so answers made before any handler runs carry it too.
  const rawId = newId('req').slice(4);
  const requestId = requestIdOf({ requestContext: { requestId: rawId } });
  let result: APIGatewayProxyStructuredResultV2;
  const caller: Caller = {};
  try {
    const body = await readBody(req);
    result = body
      ? await dispatch(handlers, req, body, url, rawId, caller)
      : // The rest of the body is never read: the connection cannot carry another request.
        withCommonHeaders(errorResult(new AppError('body_too_large', 'Request body exceeds 10 MiB.', { headers: { connection: 'close' } }), requestId), requestId);
  } catch (err) {
    // A Lambda that throws is a 500 at API Gateway; never show the error text.
    logger.error('Handler failed', { error: err as Error, path: url.pathname, request_id: requestId });
    result = withCommonHeaders(errorResult(new AppError('internal_error', 'An internal error occurred.'), requestId), requestId);
  }
  write(res, result);
  const headers = (result.headers ?? {}) as Record<string, unknown>;
  logger.info('request', {
    method: req.method,
    path: url.pathname,
    status: result.statusCode,
    duration_ms: Math.round((performance.now() - started) * 100) / 100,
    request_id: headers['Request-Id'] ?? headers['request-id'],
    ...caller,
  });
}

export interface HttpAdapter {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function startHttpAdapter(handlers: LocalHandlers, port: number, host = '127.0.0.1'): Promise<HttpAdapter> {
  const server = createServer((req, res) => void serve(handlers, req, res));
  server.keepAliveTimeout = 5000;
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host}:${boundPort}`,
    port: boundPort,
    server,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
