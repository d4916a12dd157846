import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2, Context } from 'aws-lambda';

/** Header and query maps as API Gateway HTTP APIs build them: lower-case names, repeats joined by commas. */
/**
 * Name/value pairs as an object with every name an own property, `__proto__` included (as
 * API Gateway's JSON event has it): assigning `obj['__proto__'] = v` would set the prototype
 * instead, and the parameter would vanish before validation could refuse it.
 */
function joined(pairs: Iterable<[string, string]>): Record<string, string> {
  const map = new Map<string, string>();
  for (const [name, value] of pairs) map.set(name, map.has(name) ? `${map.get(name)},${value}` : value);
  return Object.fromEntries(map) as Record<string, string>;
}

function headerMap(req: IncomingMessage): Record<string, string> {
  const pairs: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    pairs.push([(req.rawHeaders[i] as string).toLowerCase(), req.rawHeaders[i + 1] as string]);
  return joined(pairs);
}

function queryMap(search: URLSearchParams): Record<string, string> | undefined {
  const query = joined(search);
  return Object.keys(query).length > 0 ? query : undefined;
}

const TEXT_TYPES = /^(application\/(json|.*\+json|x-www-form-urlencoded|xml)|text\/)/i;

export interface RequestFacts {
  method: string;
  url: URL;
  body: Buffer;
  routeKey: string;
  pathParameters?: Record<string, string>;
  /** API Gateway's id of this request (without the `req_` of the Request-Id header). */
  requestId: string;
  /**
   * The API's own host (and port), which API Gateway names as `domainName`: links the API hands
   * out start with it. Never the request's Host header, which any client sets as it likes.
   */
  domainName: string;
}

/** A payload format 2.0 event, as API Gateway would hand it to the route's Lambda. */
export function toProxyEvent(req: IncomingMessage, facts: RequestFacts): APIGatewayProxyEventV2 {
  // API Gateway sets X-Forwarded-Proto itself (over any the client sent); this adapter speaks plain HTTP.
  const headers = headerMap(req);
  headers['x-forwarded-proto'] = 'http';
  const now = new Date();
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  const requestId = facts.requestId;
  return {
    version: '2.0',
    routeKey: facts.routeKey,
    rawPath: facts.url.pathname,
    rawQueryString: facts.url.search.slice(1),
    headers,
    queryStringParameters: queryMap(facts.url.searchParams),
    pathParameters: facts.pathParameters,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: facts.domainName,
      domainPrefix: 'local',
      http: {
        method: facts.method,
        path: facts.url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: facts.routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: facts.body.length > 0 ? facts.body.toString(isText ? 'utf8' : 'base64') : undefined,
    isBase64Encoded: facts.body.length > 0 && !isText,
  };
}

export function toAuthorizerEvent(event: APIGatewayProxyEventV2): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:local:local:local/$default/${event.routeKey.replace(' ', '')}`,
    identitySource: event.headers.authorization ? [event.headers.authorization] : [],
    routeKey: event.routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    cookies: [],
    headers: event.headers as Record<string, string>,
    queryStringParameters: (event.queryStringParameters ?? {}) as Record<string, string>,
    requestContext: event.requestContext,
    pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
    stageVariables: {},
  };
}

/**
 * A Lambda context; its deadline by default the one API Gateway imposes on integrations (30 s),
 * which the API's idempotency reads. The delivery consumer is given its own timeout.
 */
export function lambdaContext(functionName: string, requestId: string, timeoutMs = 29000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
