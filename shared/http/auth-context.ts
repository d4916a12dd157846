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
    mode: p.mode,
    scopes: p.scopes.join(' '),
    write: p.write,
    key_created_at: p.keyCreatedAt,
  };
}

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
      mode: ctx.mode as KeyMode,
      scopes: String(ctx.scopes).split(' ').filter(Boolean) as Scope[],
      // Context values may arrive as strings depending on the integration; accept both.
      write: ctx.write === true || ctx.write === 'true',
      keyCreatedAt: String(ctx.key_created_at),
    },
  };
}
