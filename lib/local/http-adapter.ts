import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handler as fallback } from '../../functions/fallback';
import { handler as portal } from '../../functions/portal';
import { AppError } from '../../shared/errors';
import { requestIdOf } from '../../shared/http/event';
import { errorResult, withCommonHeaders } from '../../shared/http/response';
import { newId } from '../../shared/ids';
import { logger } from '../../shared/logger';
import { isPortalRequest, resolve, type Route } from '../../shared/routes';
import { clientErrorOf, malformedTarget, rawResponse, REQUEST_HEAD_BYTES, targetUrl } from './client-errors';
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

/** One request as read off the connection, and the address of the API it reached. */
interface Incoming {
  req: IncomingMessage;
  body: Buffer;
  url: URL;
  /** API Gateway's id of this request (without the `req_` of the Request-Id header). */
  requestId: string;
  /** This adapter's own `host:port`, what API Gateway names as `domainName`. */
  domainName: string;
}

/** What API Gateway does for one request: match the route, run the authorizer, invoke the Lambda. */
async function dispatch(
  handlers: LocalHandlers,
  { req, body, url, requestId, domainName }: Incoming,
  caller: Caller,
): Promise<APIGatewayProxyStructuredResultV2> {
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
    domainName,
  });
  // Public routes of their own (no authorizer), as in lib/constructs/api.ts.
  if (isPortalRequest(method, url.pathname))
    return invoke(portal, event, lambdaContext('portal', event.requestContext.requestId));
  if (!built?.handler) return invoke(fallback, event, lambdaContext('fallback', event.requestContext.requestId));

  const verdict = await handlers.authorizer(toAuthorizerEvent(event));
  // API Gateway's own refusal (no route runs): its body, and its request id header only.
  if (!verdict.isAuthorized)
    return {
      statusCode: 403,
      headers: { 'apigw-requestid': requestId },
      body: JSON.stringify({ message: 'Forbidden' }),
    };
  if (verdict.context.authenticated === true)
    Object.assign(caller, { shop_id: String(verdict.context.shop_id), key_id: String(verdict.context.key_id) });
  const authorized = { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: verdict.context } } };
  const handler = await handlers.operation(built.handler);
  return handler(authorized, lambdaContext(built.operationId, event.requestContext.requestId));
}

function write(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  res.writeHead(result.statusCode ?? 200, {
    ...(result.headers as Record<string, string>),
    'content-length': body.length,
  });
  res.end(body);
}

/** One id per request from the start, so answers made before any handler runs carry it too. */
function newRequestId(): { rawId: string; requestId: string } {
  const rawId = newId('req').slice(4);
  return { rawId, requestId: requestIdOf({ requestContext: { requestId: rawId } }) };
}

const contractError = (err: AppError, requestId: string) => withCommonHeaders(errorResult(err, requestId), requestId);

async function serve(
  handlers: LocalHandlers,
  domainName: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = performance.now();
  const url = targetUrl(req.url ?? '/');
  const { rawId, requestId } = newRequestId();
  let result: APIGatewayProxyStructuredResultV2;
  const caller: Caller = {};
  try {
    const body = url ? await readBody(req) : null;
    if (!url) result = contractError(malformedTarget(), requestId);
    else if (body) result = await dispatch(handlers, { req, body, url, requestId: rawId, domainName }, caller);
    // The rest of the body is never read: the connection cannot carry another request.
    else
      result = contractError(
        new AppError('body_too_large', 'Request body exceeds 10 MiB.', { headers: { connection: 'close' } }),
        requestId,
      );
  } catch (err) {
    // A Lambda that throws is a 500 at API Gateway; never show the error text.
    logger.error('Handler failed', { error: err as Error, path: url?.pathname, request_id: requestId });
    result = contractError(new AppError('internal_error', 'An internal error occurred.'), requestId);
  }
  write(res, result);
  const headers = (result.headers ?? {}) as Record<string, unknown>;
  logger.info('request', {
    method: req.method,
    path: url?.pathname ?? null,
    status: result.statusCode,
    duration_ms: Math.round((performance.now() - started) * 100) / 100,
    request_id: headers['Request-Id'] ?? headers['request-id'],
    ...caller,
  });
}

/**
 * Per connection, the requests not answered yet, and the answer to a parse error that arrived
 * behind them: written after theirs, so a pipelining client pairs each answer with its request.
 */
const unanswered = new WeakMap<Duplex, number>();
const answerAfter = new WeakMap<Duplex, () => void>();

function track(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  unanswered.set(socket, (unanswered.get(socket) ?? 0) + 1);
  res.once('close', () => {
    const left = (unanswered.get(socket) ?? 1) - 1;
    unanswered.set(socket, left);
    if (left === 0) answerAfter.get(socket)?.();
  });
}

/**
 * A request node's parser refused (bad request line, oversized or invalid headers, a timeout):
 * no request or response object exists, so the contract's answer goes onto the socket as raw
 * HTTP, and the connection closes (what follows cannot be framed).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { requestId } = newRequestId();
  const result = contractError(clientErrorOf(err), requestId);
  const answer = () => {
    if (socket.writable) socket.end(rawResponse(result));
    else socket.destroy();
    logger.info('request', { status: result.statusCode, request_id: requestId, error: err.code });
  };
  if ((unanswered.get(socket) ?? 0) > 0) answerAfter.set(socket, answer);
  else answer();
}

export interface HttpAdapter {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** `host:port` of the listening server: the host it was asked to bind, the port it got (PORT 0 picks one). */
function ownAddress(server: Server, host: string, port: number): string {
  const address = server.address();
  return `${host}:${typeof address === 'object' && address ? address.port : port}`;
}

export async function startHttpAdapter(
  handlers: LocalHandlers,
  port: number,
  host = '127.0.0.1',
): Promise<HttpAdapter> {
  const server = createServer({ maxHeaderSize: REQUEST_HEAD_BYTES }, (req, res) => {
    track(req, res);
    // The address this stack runs on, as its banner and stack file give it: links the API hands out
    // start with it whatever Host header a client sends.
    serve(handlers, ownAddress(server, host, port), req, res).catch((err: unknown) => {
      // Whatever went wrong while answering, one request never takes the stack down.
      logger.error('Request not answered', { error: err as Error });
      res.destroy();
    });
  });
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 5000;
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${ownAddress(server, host, port)}`,
    port: boundPort,
    server,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
