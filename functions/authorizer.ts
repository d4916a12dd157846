import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { authenticate, type ApiKeyStore } from '../shared/domain/api-keys';
import { admit, type RateLimiter, type RateLimits } from '../shared/domain/rate-limits';
import { AUTHORIZER_FAILED, rateLimitedContext, toAuthorizerContext, type AuthorizerContext } from '../shared/http/auth-context';
import { logger } from '../shared/logger';
import { apiKeyDeps, rateLimitDeps } from '../shared/wiring/api';
import { lambdaDeps } from '../shared/wiring/memo';

type Deps = { apiKeys: ApiKeyStore; rateLimiter: RateLimiter; rateLimits: RateLimits };
type Event = Pick<APIGatewayRequestAuthorizerEventV2, 'headers'> & { requestContext?: { http?: { sourceIp?: string } } };

/**
 * HTTP API Lambda authorizer (simple responses), run on every request (no result cache:
 * it also counts the key's requests, docs/rate-limits.md). It answers `isAuthorized: true`
 * and carries its verdict in the context, so the route's middleware answers 401 and 429 in
 * the contract's format (API Gateway's own refusal has no contract body). It refuses
 * outright only a source address whose failed authentications are over their budget.
 */
export const makeHandler =
  (deps: () => Deps = lambdaDeps(apiKeyDeps, rateLimitDeps)) =>
  async (event: Event): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
    const now = Date.now();
    try {
      const outcome = await authenticate(deps().apiKeys, event.headers?.authorization);
      const who = outcome.ok ? { keyId: outcome.principal.keyId, mode: outcome.principal.mode } : { sourceIp: event.requestContext?.http?.sourceIp ?? 'unknown' };
      const admission = await admit(deps(), who, now).catch((err: unknown) => {
        // The limiter's store failing must not take the API down with it: let the request through.
        logger.warn('Rate limiter unavailable', { error: err as Error });
        return { refuse: false, retryAfterSeconds: null } as const;
      });
      if (admission.refuse) return { isAuthorized: false, context: {} };
      const context = toAuthorizerContext(outcome);
      return { isAuthorized: true, context: admission.retryAfterSeconds === null ? context : { ...context, ...rateLimitedContext(admission.retryAfterSeconds) } };
    } catch (err) {
      // A throw here would be API Gateway's bare 500; the route answers it in the contract's format, with its Request-Id.
      logger.error('Authorizer failed', { error: err as Error });
      return { isAuthorized: true, context: AUTHORIZER_FAILED };
    }
  };

export const handler = makeHandler();
