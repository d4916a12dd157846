/**
 * Errors by family, as stripe-node has them: callers branch with `instanceof` on the family and on
 * `code` within it (docs/api.md, Errors). Every field comes from the contract's error body
 * `{ "error": { type, code, message, param, request_id } }`; an answer without that body (API Gateway's
 * own `{"message": …}`, or a proxy's page) still gets its family from the status.
 */
import type { components } from './schema.js';

type ErrorBody = components['schemas']['Error']['error'];

export interface ErrorFields {
  status?: number;
  type?: string;
  code?: string;
  param?: string | null;
  requestId?: string;
  headers?: Headers;
  raw?: unknown;
  cause?: unknown;
}

export class ShopCallsError extends Error {
  override readonly name: string = 'ShopCallsError';
  /** The HTTP status, or undefined when no answer came (ConnectionError). */
  readonly status: number | undefined;
  /** The contract's error type (`invalid_request_error`, `idempotency_error`, …), when the body had one. */
  readonly type: string | undefined;
  /** The stable code to branch on (`parameter_invalid`, `version_conflict`, …); message is for people. */
  readonly code: string | undefined;
  /** The offending field as a dotted path, or null. */
  readonly param: string | null;
  /** Quote it when asking about a request: the body's `request_id`, else the `Request-Id` header. */
  readonly requestId: string | undefined;
  readonly headers: Headers | undefined;
  /** The parsed body as it came, for fields this class does not lift (for example `current_version`). */
  readonly raw: unknown;

  constructor(message: string, fields: ErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param ?? null;
    this.requestId = fields.requestId;
    this.headers = fields.headers;
    this.raw = fields.raw;
  }
}

/** 401: no key, a garbled, unknown or revoked key, or an expired portal session token. */
export class AuthenticationError extends ShopCallsError {
  override readonly name: string = 'AuthenticationError';
}

/** 403: the key lacks the operation's scope, or is read-only on a write. */
export class PermissionError extends ShopCallsError {
  override readonly name: string = 'PermissionError';
}

/** 404: an unknown id, another shop's id, or a transcript or summary not there yet. */
export class NotFoundError extends ShopCallsError {
  override readonly name: string = 'NotFoundError';
}

/** 409: a job's version moved on, it is no longer pending, or an Idempotency-Key is still in use. */
export class ConflictError extends ShopCallsError {
  override readonly name: string = 'ConflictError';
  /** On `version_conflict`, the job's version now, so a caller can re-read and decide again. */
  readonly currentVersion: number | null;

  constructor(message: string, fields: ErrorFields = {}) {
    super(message, fields);
    const body = errorBody(fields.raw);
    this.currentVersion = typeof body?.current_version === 'number' ? body.current_version : null;
  }
}

/** 429: the key's rate limit; `retryAfter` is the wait in seconds the answer asked for, when it did. */
export class RateLimitError extends ShopCallsError {
  override readonly name: string = 'RateLimitError';
  readonly retryAfter: number | null;

  constructor(message: string, fields: ErrorFields = {}) {
    super(message, fields);
    this.retryAfter = retryAfterSeconds(fields.headers?.get('retry-after') ?? null);
  }
}

/** 400, 422 and every other 4xx: the request itself is wrong; sending it again changes nothing. */
export class InvalidRequestError extends ShopCallsError {
  override readonly name: string = 'InvalidRequestError';
}

/** 5xx: the service failed; a retry may succeed (writes only with their Idempotency-Key). */
export class ApiError extends ShopCallsError {
  override readonly name: string = 'ApiError';
}

/** No answer: the network failed or the request timed out, after every retry allowed. */
export class ConnectionError extends ShopCallsError {
  override readonly name: string = 'ConnectionError';
  readonly timedOut: boolean;

  constructor(message: string, fields: ErrorFields & { timedOut?: boolean } = {}) {
    super(message, fields);
    this.timedOut = fields.timedOut ?? false;
  }
}

/** Whole seconds (the contract's form) or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

function errorBody(raw: unknown): Partial<ErrorBody> | undefined {
  if (typeof raw !== 'object' || raw === null || !('error' in raw)) return undefined;
  const inner = (raw as { error: unknown }).error;
  return typeof inner === 'object' && inner !== null ? (inner as Partial<ErrorBody>) : undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The error a non-2xx answer stands for, from its status, its parsed body and its headers. */
export function errorFromResponse(status: number, raw: unknown, headers: Headers): ShopCallsError {
  const body = errorBody(raw);
  const gatewayMessage =
    typeof raw === 'object' && raw !== null ? str((raw as { message?: unknown }).message) : undefined;
  const fields: ErrorFields = {
    status,
    type: str(body?.type),
    code: str(body?.code),
    param: str(body?.param) ?? null,
    requestId: str(body?.request_id) ?? headers.get('request-id') ?? headers.get('apigw-requestid') ?? undefined,
    headers,
    raw,
  };
  const text = typeof raw === 'string' && raw.length > 0 && raw.length <= 200 ? raw : undefined;
  const message = str(body?.message) ?? gatewayMessage ?? text ?? `HTTP ${status}`;
  if (status === 401) return new AuthenticationError(message, fields);
  if (status === 403) return new PermissionError(message, fields);
  if (status === 404) return new NotFoundError(message, fields);
  if (status === 409) return new ConflictError(message, fields);
  if (status === 429) return new RateLimitError(message, fields);
  if (status >= 500) return new ApiError(message, fields);
  return new InvalidRequestError(message, fields);
}
