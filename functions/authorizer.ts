import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { authenticate, type ApiKeyStore } from '../shared/domain/api-keys';
import { toAuthorizerContext, type AuthorizerContext } from '../shared/http/auth-context';
import { runtimeDeps } from '../shared/runtime';

/**
 * HTTP API Lambda authorizer (simple responses). It always answers `isAuthorized: true`
 * and carries its verdict in the context: the route's middleware turns a failed verdict
 * into the contract's 401 body (API Gateway's own refusal has no contract body).
 */
export async function authorize(
  event: Pick<APIGatewayRequestAuthorizerEventV2, 'headers'>,
  apiKeys: ApiKeyStore = runtimeDeps().apiKeys,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> {
  const outcome = await authenticate(apiKeys, event.headers?.authorization);
  return { isAuthorized: true, context: toAuthorizerContext(outcome) };
}

export const handler = (event: APIGatewayRequestAuthorizerEventV2) => authorize(event);
