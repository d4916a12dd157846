import type { Context } from 'aws-lambda';
import type { Principal } from '../../shared/domain/api-keys';
import { toAuthorizerContext } from '../../shared/http/auth-context';
import type { ApiEvent } from '../../shared/http/event';
import { SCOPES } from '../../shared/domain/scopes';
import { lambdaContext } from '../../lib/local/lambda-events';

export function principal(overrides: Partial<Principal> = {}): Principal {
  return {
    shopId: 'shop_01jd0000000000000000000000',
    keyId: 'key_01jd0000000000000000000000',
    keyHash: 'a'.repeat(64),
    mode: 'test',
    scopes: [...SCOPES],
    write: true,
    keyCreatedAt: '2026-11-21T00:00:00.000Z',
    ...overrides,
  };
}

let counter = 0;

/** A payload 2.0 event as API Gateway hands it to a route after the authorizer. */
export function apiEvent(opts: {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
  principal?: Principal | null;
}): ApiEvent {
  const requestId = `test${++counter}`;
  const headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  if (opts.body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/json';
  const auth =
    opts.principal === null
      ? toAuthorizerContext({ ok: false, code: 'missing_api_key', message: 'No API key provided.' })
      : toAuthorizerContext({ ok: true, principal: opts.principal ?? principal() });
  return {
    version: '2.0',
    routeKey: `${opts.method} ${opts.path}`,
    rawPath: opts.path,
    rawQueryString: new URLSearchParams(opts.query ?? {}).toString(),
    headers,
    queryStringParameters: opts.query,
    pathParameters: opts.pathParameters,
    body: opts.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'test',
      domainPrefix: 'test',
      http: { method: opts.method, path: opts.path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId,
      routeKey: `${opts.method} ${opts.path}`,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
      authorizer: { lambda: auth, integrationLatency: 0, principalId: '' },
    },
  } as ApiEvent;
}

export const context = (): Context => lambdaContext('test', `test-${counter}`);

export function parseBody(result: { body?: string }): Record<string, unknown> {
  return JSON.parse(result.body ?? 'null') as Record<string, unknown>;
}
