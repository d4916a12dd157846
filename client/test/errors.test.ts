import {
  ApiError,
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ShopCallsError,
} from '../src';
import { type Reply, type Scripted, scriptedServer, testClient } from './support/server';

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function errorFor(reply: Reply): Promise<ShopCallsError> {
  server = await scriptedServer([reply]);
  const { client } = testClient(server.baseUrl, { maxRetries: 0 });
  const error = await client.jobs.approve('job_1', { version: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ShopCallsError)) throw new Error(`expected a ShopCallsError, got ${String(error)}`);
  return error;
}

const contractBody = (type: string, code: string, param: string | null = null, extra = {}) => ({
  error: { type, code, message: `${code} happened`, param, request_id: `req_${code}`, ...extra },
});

describe('error classes by status', () => {
  // The class's name joins each row, for the test's title.
  it.each(
    (
      [
        [400, InvalidRequestError, 'invalid_request_error', 'parameter_invalid', 'version'],
        [401, AuthenticationError, 'authentication_error', 'invalid_api_key', null],
        [403, PermissionError, 'permission_error', 'insufficient_scope', null],
        [404, NotFoundError, 'invalid_request_error', 'resource_missing', null],
        [405, InvalidRequestError, 'invalid_request_error', 'method_not_allowed', null],
        [409, ConflictError, 'invalid_request_error', 'invalid_state', null],
        [413, InvalidRequestError, 'invalid_request_error', 'body_too_large', null],
        [415, InvalidRequestError, 'invalid_request_error', 'unsupported_media_type', null],
        [422, InvalidRequestError, 'idempotency_error', 'idempotency_key_reused', null],
        [429, RateLimitError, 'rate_limit_error', 'rate_limited', null],
        [500, ApiError, 'api_error', 'internal_error', null],
        [503, ApiError, 'api_error', 'internal_error', null],
      ] as const
    ).map(([status, Class, ...rest]) => [status, Class.name, Class, ...rest] as const),
  )('%i → %s, with the body’s fields', async (status, _name, Class, type, code, param) => {
    const error = await errorFor({
      status,
      json: contractBody(type, code, param),
      headers: { 'request-id': 'req_hdr' },
    });
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(ShopCallsError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(Class.name);
    expect(error).toMatchObject({ status, type, code, param, message: `${code} happened`, requestId: `req_${code}` });
  });

  it('gives a version conflict’s current version', async () => {
    const error = await errorFor({
      status: 409,
      json: contractBody('invalid_request_error', 'version_conflict', null, { current_version: 4 }),
    });
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).currentVersion).toBe(4);
  });

  it('gives a rate limit’s Retry-After in seconds, or null without one', async () => {
    const withHeader = await errorFor({
      status: 429,
      json: contractBody('rate_limit_error', 'rate_limited'),
      headers: { 'retry-after': '2' },
    });
    expect((withHeader as RateLimitError).retryAfter).toBe(2);
    await server?.close();
    const without = await errorFor({ status: 429, json: { message: 'Too Many Requests' } });
    expect(without).toMatchObject({ retryAfter: null, message: 'Too Many Requests', code: undefined });
  });

  it('reads API Gateway’s own answer: its message, and apigw-requestid for the request id', async () => {
    const error = await errorFor({
      status: 403,
      json: { message: 'Forbidden' },
      headers: { 'request-id': null, 'apigw-requestid': 'gw_123' },
    });
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ message: 'Forbidden', code: undefined, param: null, requestId: 'gw_123' });
  });

  it('falls back to the Request-Id header when the body has no request_id', async () => {
    const error = await errorFor({
      status: 404,
      json: { error: { code: 'resource_missing', message: 'no such job' } },
    });
    expect(error).toMatchObject({ code: 'resource_missing', requestId: 'req_0' });
  });

  it('keeps a short text body as the message, and says the status otherwise', async () => {
    const text = await errorFor({ status: 502, text: 'Bad Gateway', headers: { 'content-type': 'text/plain' } });
    expect(text).toBeInstanceOf(ApiError);
    expect(text.message).toBe('Bad Gateway');
    await server?.close();
    const empty = await errorFor({ status: 418 });
    expect(empty).toBeInstanceOf(InvalidRequestError);
    expect(empty.message).toBe('HTTP 418');
    expect(empty.headers?.get('request-id')).toBe('req_0');
  });
});
