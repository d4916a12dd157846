import { AppError, type ErrorCode } from '../errors';

type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

/** Status and type of every code (docs/api.md, Errors). */
const STATUS: Record<ErrorCode, [number, ErrorType]> = {
  invalid_json: [400, 'invalid_request_error'],
  parameter_missing: [400, 'invalid_request_error'],
  parameter_invalid: [400, 'invalid_request_error'],
  parameter_unknown: [400, 'invalid_request_error'],
  invalid_cursor: [400, 'invalid_request_error'],
  cursor_expired: [410, 'invalid_request_error'],
  missing_api_key: [401, 'authentication_error'],
  invalid_api_key: [401, 'authentication_error'],
  insufficient_scope: [403, 'permission_error'],
  write_key_required: [403, 'permission_error'],
  resource_missing: [404, 'invalid_request_error'],
  route_not_found: [404, 'invalid_request_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  version_conflict: [409, 'invalid_request_error'],
  invalid_state: [409, 'invalid_request_error'],
  idempotency_key_in_use: [409, 'idempotency_error'],
  idempotency_key_reused: [422, 'idempotency_error'],
  body_too_large: [413, 'invalid_request_error'],
  unsupported_media_type: [415, 'invalid_request_error'],
  // Only the local adapter answers these: in AWS such requests never get past API Gateway.
  malformed_request: [400, 'invalid_request_error'],
  request_timeout: [408, 'invalid_request_error'],
  headers_too_large: [431, 'invalid_request_error'],
  rate_limited: [429, 'rate_limit_error'],
  not_implemented: [501, 'api_error'],
  internal_error: [500, 'api_error'],
};

export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError(
    'internal_error',
    'An internal error occurred. Retry later, quoting the request_id if it persists.',
  );
}

export function errorStatus(err: AppError): number {
  return STATUS[err.code][0];
}

export function errorBody(err: AppError, requestId: string): Record<string, unknown> {
  const [, type] = STATUS[err.code];
  return {
    error: {
      type,
      code: err.code,
      message: err.message,
      param: err.options.param ?? null,
      ...err.options.extra,
      request_id: requestId,
    },
  };
}
