import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { lookUpKey, presentedKey, type ApiKeyStore } from '../shared/domain/api-keys';
import { admitFailure, admitKey, failureBucket, type Admission, type RateLimiter, type RateLimits } from '../shared/domain/rate-limits';
import { AUTHORIZER_FAILED, rateLimitedContext, toAuthorizerContext, type AuthorizerContext } from '../shared/http/auth-context';
import { logger } from '../shared/logger';
import { apiKeyDeps, rateLimitDeps } from '../shared/wiring/api';
import { lambdaDeps } from '../shared/wiring/memo';

type Deps = { apiKeys: ApiKeyStore; rateLimiter: RateLimiter; rateLimits: RateLimits };
type Event = Pick<APIGatewayRequestAuthorizerEventV2, 'headers'> & { requestContext?: { http?: { sourceIp?: string } } };

/** The limiter's store failing must not take the API down with it: let the request through. */
const LET_THROUGH: Admission = { refuse: false, retryAfterSeconds: null };
const orLetThrough = (admission: Promise<Admission>): Promise<Admission> =>
  admission.catch((err: unknown) => {
    logger.warn('Rate limiter unavailable', { error: err as Error });
    return LET_THROUGH;
  });

/**
 * HTTP API Lambda authorizer (simple responses), run on every request (no result cache:
 * it also counts the key's requests, docs/rate-limits.md). It answers `isAuthorized: true`
 * and carries its verdict in the context, so the route's middleware answers 401 and 429 in
 * the contract's format (API Gateway's own refusal has no contract body). It refuses
 * outright only a source address whose failed authentications are over their budget.
 *
 * A well-formed key takes from its bucket while it is looked up: one table round trip per
 * request, not two. Not when its source address failed to authenticate lately (this
 * instance saw it): a flood of made-up keys then costs no write for their buckets.
 */
export const makeHandler =
  (deps: () => Deps = lambdaDeps(apiKeyDeps, rateLimitDeps)) =>
  async (event: Event): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
    const now = Date.now();
    const sourceIp = event.requestContext?.http?.sourceIp ?? 'unknown';
    try {
      const presented = presentedKey(event.headers?.authorization);
      const early = presented.ok && !deps().rateLimiter.busy(failureBucket(sourceIp), now) ? orLetThrough(admitKey(deps(), presented.hash, presented.mode, now)) : null;
      const outcome = presented.ok ? await lookUpKey(deps().apiKeys, presented) : presented;
      const admission = await (outcome.ok && presented.ok ? (early ?? orLetThrough(admitKey(deps(), presented.hash, presented.mode, now))) : orLetThrough(admitFailure(deps(), sourceIp, now)));
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
