import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { lookUpKey, presentedKey, type ApiKeyStore } from '../shared/domain/api-keys';
import { admitFailure, admitKey, type Admission, type RateLimiter, type RateLimits } from '../shared/domain/rate-limits';
import { AUTHORIZER_FAILED, rateLimitedContext, toAuthorizerContext, type AuthorizerContext } from '../shared/http/auth-context';
import { logger, withLambdaContext } from '../shared/logger';
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

/** Keys an instance remembers having seen authenticate, by hash; past this many it forgets them all. */
const KNOWN_KEYS_MAX = 10_000;

/**
 * HTTP API Lambda authorizer (simple responses), run on every request (no result cache:
 * it also counts the key's requests, docs/rate-limits.md). It answers `isAuthorized: true`
 * and carries its verdict in the context, so the route's middleware answers 401 and 429 in
 * the contract's format (API Gateway's own refusal has no contract body). It refuses
 * outright only a source address whose failed authentications are over their budget.
 *
 * A key this instance has seen authenticate takes from its bucket while it is looked up:
 * one table round trip before the route, not two. Any other key is looked up first, so a
 * made-up key never costs a write of its own (nor puts its hash in the table).
 */
export const makeHandler = (deps: () => Deps = lambdaDeps(apiKeyDeps, rateLimitDeps), clock: () => number = Date.now) => {
  const known = new Set<string>();
  return withLambdaContext(async (event: Event): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
    const now = clock();
    const sourceIp = event.requestContext?.http?.sourceIp ?? 'unknown';
    const presented = presentedKey(event.headers?.authorization);
    let early: Promise<Admission> | null = null;
    try {
      if (presented.ok && known.has(presented.hash)) early = orLetThrough(admitKey(deps(), presented.hash, presented.mode, now));
      const outcome = presented.ok ? await lookUpKey(deps().apiKeys, presented) : presented;
      let admission: Admission;
      if (outcome.ok && presented.ok) {
        if (!known.has(presented.hash)) {
          if (known.size >= KNOWN_KEYS_MAX) known.clear();
          known.add(presented.hash);
        }
        admission = await (early ?? orLetThrough(admitKey(deps(), presented.hash, presented.mode, now)));
      } else {
        if (presented.ok) known.delete(presented.hash);
        [admission] = await Promise.all([orLetThrough(admitFailure(deps(), sourceIp, now)), early]);
      }
      if (admission.refuse) return { isAuthorized: false, context: {} };
      const context = toAuthorizerContext(outcome);
      return { isAuthorized: true, context: admission.retryAfterSeconds === null ? context : { ...context, ...rateLimitedContext(admission.retryAfterSeconds) } };
    } catch (err) {
      // A throw here would be API Gateway's bare 500; the route answers it in the contract's format, with its Request-Id.
      logger.error('Authorizer failed', { error: err as Error });
      // Nothing left running when the instance may be frozen (the take never rejects).
      await early;
      return { isAuthorized: true, context: AUTHORIZER_FAILED };
    }
  });
};

export const handler = makeHandler();
