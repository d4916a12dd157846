import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { AppError } from '../shared/errors';
import { envelope } from '../shared/http/envelope';
import { resolve } from '../shared/routes';
import openapi from '../docs/openapi.json';

const OPENAPI = JSON.stringify(openapi);

/**
 * The `$default` route: whatever matched no built route. Serves GET /v1/openapi.json, and
 * answers 404 route_not_found, 405 with `Allow` for a known path, or 501 for an operation
 * not built yet.
 */
export const handler = envelope<APIGatewayProxyEventV2>(async (event) => {
  const method = event.requestContext.http.method;
  const path = event.rawPath;
  // The API description is public: no key needed to read how to use the API.
  if (path === '/v1/openapi.json' && (method === 'GET' || method === 'HEAD')) {
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' },
      body: OPENAPI,
    };
  }
  const resolution = resolve(method, path);
  if (resolution.kind === 'route') {
    throw new AppError('not_implemented', `${resolution.route.method} ${resolution.route.path} is not available yet.`);
  }
  if (resolution.kind === 'method_not_allowed') {
    const allow = resolution.allow.join(', ');
    throw new AppError('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allow}.`, {
      headers: { allow },
    });
  }
  throw new AppError('route_not_found', `Unrecognized request URL (${method} ${path}).`);
});
