import type { MiddlewareObj } from '@middy/core';
import type { Principal } from '../domain/api-keys';
import { AppError } from '../errors';
import type { Route } from '../routes';
import { asAppError } from './errors';
import { authorizerFailed, fromAuthorizerContext, retryAfterOf } from './auth-context';
import type { ApiEvent } from './event';
import type { HttpResult } from './response';
import { jsonKind } from './json-input';

type Middleware = MiddlewareObj<ApiEvent, HttpResult>;

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * 429 when the authorizer found the key over its limit (first thing: nothing else runs),
 * 401 unless the authorizer vouched for the key, then 403 without one of the route's scopes
 * (a portal session's token: outside the portal's routes too), then 403 for read-only keys
 * on writes.
 */
export const authorize = (route: Route): Middleware => ({
  before: ({ event }) => {
    const context = event.requestContext.authorizer?.lambda;
    const retryAfter = retryAfterOf(context);
    if (retryAfter !== null) {
      throw new AppError('rate_limited', `Too many requests with this API key; retry after ${retryAfter} s.`, {
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    if (authorizerFailed(context)) throw asAppError(new Error('the authorizer could not decide'));
    const outcome = fromAuthorizerContext(context);
    if (!outcome.ok) throw new AppError(outcome.code, outcome.message);
    const refusal = scopeRefusal(route, outcome.principal);
    if (refusal) throw new AppError('insufficient_scope', refusal);
    if (route.write && !outcome.principal.write) {
      throw new AppError(
        'write_key_required',
        `${route.method} ${route.path} needs a write key; this key is read-only.`,
      );
    }
    event.principal = outcome.principal;
  },
});

/** Why the caller may not call the route (the contract's insufficient_scope), or null when it may. */
export function scopeRefusal(route: Route, principal: Principal): string | null {
  const operation = `${route.method} ${route.path}`;
  if (principal.session && !route.portalSession) {
    return (
      `A portal session can manage webhook endpoints and read or redeliver events only; it cannot ` +
      `call ${operation}. Use an API key.`
    );
  }
  if (route.scopes.length === 0 || route.scopes.some((scope) => principal.scopes.includes(scope))) return null;
  // The last scope is the one that allows the most (webhooks:write allows the reads too).
  const named = route.scopes[route.scopes.length - 1] ?? '';
  if (principal.session) return `This portal link is read-only; ${operation} needs the '${named}' scope.`;
  const alternatives = route.scopes.map((scope) => `'${scope}'`).join(' or ');
  return `This API key lacks the ${alternatives} scope required by ${operation}.`;
}

/** Enforces the contract's body rules: JSON content type, at most 64 KiB, a JSON object. */
export const requestBody = (): Middleware => ({
  before: ({ event }) => {
    const raw = event.body ?? '';
    const size = Buffer.byteLength(raw, event.isBase64Encoded ? 'base64' : 'utf8');
    if (size > MAX_BODY_BYTES) {
      throw new AppError('body_too_large', `Request body is ${size} bytes; the limit is ${MAX_BODY_BYTES} bytes.`);
    }
    if (size === 0) {
      event.jsonBody = {};
      return;
    }
    const contentType = event.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;.*)?$/i.test(contentType)) {
      throw new AppError(
        'unsupported_media_type',
        'Send request bodies as JSON with "Content-Type: application/json".',
      );
    }
    const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AppError('invalid_json', 'Request body is not valid JSON.');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new AppError('invalid_json', `Request body must be a JSON object ({...}), not ${jsonKind(parsed)}.`);
    }
    event.jsonBody = parsed as Record<string, unknown>;
  },
});

/**
 * The input check of an operation that takes none: a body field or query parameter is
 * refused as a schema of no fields refuses it (`parameter_unknown`, body first), without
 * zod (see `requestSchemas` in ./validation.ts for the operations that take input).
 */
export const noInput = (): Middleware => ({
  before: ({ event }) => {
    for (const given of [event.jsonBody ?? {}, event.queryStringParameters ?? {}]) {
      const [param] = Object.keys(given);
      if (param !== undefined)
        throw new AppError('parameter_unknown', `Received unknown parameter: ${param}`, { param });
    }
    event.input = { body: {}, query: {} };
  },
});
