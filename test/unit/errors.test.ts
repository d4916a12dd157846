import { AppError } from '../../shared/errors';
import { asAppError, errorBody, errorStatus } from '../../shared/http/errors';
import { errorResult } from '../../shared/http/response';

describe('error mapping', () => {
  it.each([
    ['invalid_json', 400, 'invalid_request_error'],
    ['missing_api_key', 401, 'authentication_error'],
    ['insufficient_scope', 403, 'permission_error'],
    ['write_key_required', 403, 'permission_error'],
    ['resource_missing', 404, 'invalid_request_error'],
    ['method_not_allowed', 405, 'invalid_request_error'],
    ['version_conflict', 409, 'invalid_request_error'],
    ['idempotency_key_in_use', 409, 'idempotency_error'],
    ['body_too_large', 413, 'invalid_request_error'],
    ['unsupported_media_type', 415, 'invalid_request_error'],
    ['idempotency_key_reused', 422, 'idempotency_error'],
    ['rate_limited', 429, 'rate_limit_error'],
    ['internal_error', 500, 'api_error'],
  ] as const)('%s → %d %s', (code, status, type) => {
    const err = new AppError(code, 'm');
    expect(errorStatus(err)).toBe(status);
    expect((errorBody(err, 'req_1').error as Record<string, unknown>).type).toBe(type);
  });

  it('carries param, extra fields and the request id', () => {
    const body = errorBody(
      new AppError('version_conflict', 'stale', { param: 'version', extra: { current_version: 3 } }),
      'req_9',
    );
    expect(body).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'version_conflict',
        message: 'stale',
        param: 'version',
        current_version: 3,
        request_id: 'req_9',
      },
    });
  });

  it('never exposes the text of unexpected errors', () => {
    const leaked = new Error('ResourceNotFoundException: arn:aws:dynamodb:eu-west-1:123456789012:table/secret');
    const result = errorResult(asAppError(leaked), 'req_2');
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('arn:aws');
    expect(result.body).not.toContain('ResourceNotFound');
  });

  it('adds WWW-Authenticate to 401s', () => {
    expect(errorResult(new AppError('invalid_api_key', 'no'), 'r').headers['www-authenticate']).toMatch(/^Bearer/);
  });
});
