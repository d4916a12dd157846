import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { authenticate, type ApiKeyStore } from '../shared/domain/api-keys';
import { toAuthorizerContext, type AuthorizerContext } from '../shared/http/auth-context';
import { apiKeyDeps } from '../shared/wiring/api';
import { lambdaDeps } from '../shared/wiring/memo';

/**
 * HTTP API Lambda authorizer (simple responses). It always answers `isAuthorized: true`
 * and carries its verdict in the context: the route's middleware turns a failed verdict
 * into the contract's 401 body (API Gateway's own refusal has no contract body).
 */
export const makeHandler =
  (deps: () => { apiKeys: ApiKeyStore } = lambdaDeps(apiKeyDeps)) =>
  async (event: Pick<APIGatewayRequestAuthorizerEventV2, 'headers'>): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
    const outcome = await authenticate(deps().apiKeys, event.headers?.authorization);
    return { isAuthorized: true, context: toAuthorizerContext(outcome) };
  };

export const handler = makeHandler();
