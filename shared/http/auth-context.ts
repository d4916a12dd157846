import type { AuthOutcome, KeyMode } from '../domain/api-keys';
import type { Scope } from '../domain/scopes';

/**
 * What the Lambda authorizer passes to every route (HTTP API simple response `context`;
 * values must be primitives). The authorizer always authorizes and carries the verdict, so
 * a refusal reaches the client as the contract's 401 body instead of API Gateway's own.
 */
export type AuthorizerContext = Record<string, string | boolean>;

export function toAuthorizerContext(outcome: AuthOutcome): AuthorizerContext {
  if (!outcome.ok) return { authenticated: false, error_code: outcome.code, error_message: outcome.message };
  const p = outcome.principal;
  return {
    authenticated: true,
    shop_id: p.shopId,
    key_id: p.keyId,
    key_hash: p.keyHash,
    mode: p.mode,
    scopes: p.scopes.join(' '),
    write: p.write,
    key_created_at: p.keyCreatedAt,
    ...(p.session
      ? {
          session_id: p.session.id,
          session_expires_at: p.session.expiresAt,
          session_read_only: p.session.readOnly,
          session_shop_name: p.session.shopName,
        }
      : {}),
  };
}

/** Added to a valid key's context when it is over its limit: the route answers 429. */
export const rateLimitedContext = (retryAfterSeconds: number): AuthorizerContext => ({
  rate_limited: true,
  retry_after: String(retryAfterSeconds),
});

/** Whole seconds to wait when the authorizer found the key over its limit; null otherwise. */
export function retryAfterOf(ctx: AuthorizerContext | undefined): number | null {
  if (ctx?.rate_limited !== true && ctx?.rate_limited !== 'true') return null;
  const seconds = Number(ctx.retry_after);
  return Number.isInteger(seconds) && seconds >= 1 ? seconds : 1;
}

/** The authorizer could not decide (its store is down): the route answers 500, with its Request-Id. */
export const AUTHORIZER_FAILED: AuthorizerContext = { authenticated: false, error_code: 'internal_error' };
export const authorizerFailed = (ctx: AuthorizerContext | undefined): boolean => ctx?.error_code === 'internal_error';

export function fromAuthorizerContext(ctx: AuthorizerContext | undefined): AuthOutcome {
  if (!ctx || ctx.authenticated !== true) {
    const code = ctx?.error_code === 'invalid_api_key' ? 'invalid_api_key' : 'missing_api_key';
    const message = typeof ctx?.error_message === 'string' ? ctx.error_message : 'No API key provided.';
    return { ok: false, code, message };
  }
  return {
    ok: true,
    principal: {
      shopId: String(ctx.shop_id),
      keyId: String(ctx.key_id),
      keyHash: String(ctx.key_hash),
      mode: ctx.mode as KeyMode,
      scopes: String(ctx.scopes).split(' ').filter(Boolean) as Scope[],
      // Context values may arrive as strings depending on the integration; accept both.
      write: ctx.write === true || ctx.write === 'true',
      keyCreatedAt: String(ctx.key_created_at),
      ...(typeof ctx.session_id === 'string'
        ? {
            session: {
              id: ctx.session_id,
              expiresAt: String(ctx.session_expires_at),
              readOnly: ctx.session_read_only === true || ctx.session_read_only === 'true',
              shopName: String(ctx.session_shop_name),
            },
          }
        : {}),
    },
  };
}
