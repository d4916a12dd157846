import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import {
  bearerCredential,
  hashKey,
  lookUpKey,
  presentedKey,
  type ApiKeyStore,
  type AuthFailure,
  type KeyMode,
  type PresentedKey,
} from '../shared/domain/api-keys';
import { isSessionToken, lookUpSession, type PortalSessionStore } from '../shared/domain/portal-sessions';
import {
  admitFailure,
  admitKey,
  type Admission,
  type RateLimiter,
  type RateLimits,
} from '../shared/domain/rate-limits';
import {
  AUTHORIZER_FAILED,
  rateLimitedContext,
  toAuthorizerContext,
  type AuthorizerContext,
} from '../shared/http/auth-context';
import { logger, withLambdaContext } from '../shared/logger';
import { apiKeyDeps, portalSessionDeps, rateLimitDeps } from '../shared/wiring/api';
import { lambdaDeps } from '../shared/wiring/memo';

type Deps = {
  apiKeys: ApiKeyStore;
  portalSessions: Pick<PortalSessionStore, 'getByHash'>;
  rateLimiter: RateLimiter;
  rateLimits: RateLimits;
};
type Event = Pick<APIGatewayRequestAuthorizerEventV2, 'headers'> & {
  requestContext?: { http?: { sourceIp?: string } };
};

/** The limiter's store failing must not take the API down with it: let the request through. */
const LET_THROUGH: Admission = { refuse: false, retryAfterSeconds: null };
const orLetThrough = (admission: Promise<Admission>): Promise<Admission> =>
  admission.catch((err: unknown) => {
    logger.warn('Rate limiter unavailable', { error: err as Error });
    return LET_THROUGH;
  });

/** Keys an instance remembers having seen authenticate, by hash; past this many it forgets them all. */
const KNOWN_KEYS_MAX = 10_000;

/** A portal session's token (its mode is its record's), or a key (its mode is in its prefix). */
type Presented = { ok: true; hash: string; session: true } | (PresentedKey & { session?: false }) | AuthFailure;

function present(authorization: string | undefined): Presented {
  const token = bearerCredential(authorization);
  if (token !== undefined && isSessionToken(token)) return { ok: true, hash: hashKey(token), session: true };
  return presentedKey(authorization);
}

/**
 * HTTP API Lambda authorizer (simple responses), run on every request (no result cache:
 * it also counts the key's requests, docs/rate-limits.md). It answers `isAuthorized: true`
 * and carries its verdict in the context, so the route's middleware answers 401 and 429 in
 * the contract's format (API Gateway's own refusal has no contract body). It refuses
 * outright only a source address whose failed authentications are over their budget.
 *
 * A key (or portal session token) this instance has seen authenticate takes from its
 * bucket, at the mode it had, while it is looked up: one table round trip before the route,
 * not two (a key's portal session adds the read of that key's status, after its own). Any
 * other is looked up first, so a made-up key never costs a write of its own (nor puts its
 * hash in the table).
 */
export const makeHandler = (
  deps: () => Deps = lambdaDeps(apiKeyDeps, rateLimitDeps, portalSessionDeps),
  clock: () => number = Date.now,
) => {
  const known = new Map<string, KeyMode>();
  return withLambdaContext(
    async (event: Event): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> => {
      const now = clock();
      const sourceIp = event.requestContext?.http?.sourceIp ?? 'unknown';
      const presented = present(event.headers?.authorization);
      let early: Promise<Admission> | null = null;
      try {
        const knownMode = presented.ok ? known.get(presented.hash) : undefined;
        if (presented.ok && knownMode) early = orLetThrough(admitKey(deps(), presented.hash, knownMode, clock));
        const outcome = !presented.ok
          ? presented
          : presented.session
            ? await lookUpSession(deps(), presented.hash, now)
            : await lookUpKey(deps().apiKeys, presented);
        let admission: Admission;
        if (outcome.ok && presented.ok) {
          const mode = outcome.principal.mode;
          if (known.get(presented.hash) !== mode) {
            if (known.size >= KNOWN_KEYS_MAX) known.clear();
            known.set(presented.hash, mode);
          }
          admission = await (early ?? orLetThrough(admitKey(deps(), presented.hash, mode, clock)));
        } else {
          if (presented.ok) known.delete(presented.hash);
          [admission] = await Promise.all([orLetThrough(admitFailure(deps(), sourceIp, clock)), early]);
        }
        if (admission.refuse) return { isAuthorized: false, context: {} };
        const context = toAuthorizerContext(outcome);
        return {
          isAuthorized: true,
          context:
            admission.retryAfterSeconds === null
              ? context
              : { ...context, ...rateLimitedContext(admission.retryAfterSeconds) },
        };
      } catch (err) {
        // A throw here would be API Gateway's bare 500; the route answers it in the contract's
        // format, with its Request-Id.
        logger.error('Authorizer failed', { error: err as Error });
        // Nothing left running when the instance may be frozen (the take never rejects).
        await early;
        return { isAuthorized: true, context: AUTHORIZER_FAILED };
      }
    },
  );
};

export const handler = makeHandler();
