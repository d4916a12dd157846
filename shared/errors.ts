/**
 * The one error type the domain and the HTTP layer share. `code` is the contract's
 * vocabulary (docs/api.md, Errors); shared/http/errors.ts maps it to status and type.
 */
export type ErrorCode =
  | 'invalid_json'
  | 'parameter_missing'
  | 'parameter_invalid'
  | 'parameter_unknown'
  | 'invalid_cursor'
  | 'cursor_expired'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'insufficient_scope'
  | 'write_key_required'
  | 'resource_missing'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'version_conflict'
  | 'invalid_state'
  | 'idempotency_key_in_use'
  | 'idempotency_key_reused'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'malformed_request'
  | 'request_timeout'
  | 'headers_too_large'
  | 'rate_limited'
  | 'not_implemented'
  | 'internal_error';

export interface AppErrorOptions {
  /** Dotted path of the offending field, for 400s. */
  param?: string;
  /** Extra fields merged into the error body (e.g. `current_version`). */
  extra?: Record<string, unknown>;
  /** Extra response headers (e.g. `Allow`, `Retry-After`). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string, id: string): AppError =>
  new AppError('resource_missing', `No such ${what}: '${id}'`, { param: 'id' });
