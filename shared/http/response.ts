import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { AppError } from '../errors';
import { errorBody, errorStatus } from './errors';

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> };

/** A body that is JSON text already (a fixed document read from a file): answered as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

export function jsonResult(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: body instanceof JsonText ? body.text : JSON.stringify(body),
  };
}

export function errorResult(err: AppError, requestId: string): HttpResult {
  const headers: Record<string, string> = { ...err.options.headers };
  if (err.code === 'missing_api_key' || err.code === 'invalid_api_key') {
    headers['www-authenticate'] = 'Bearer realm="api"';
  }
  return jsonResult(errorStatus(err), errorBody(err, requestId), headers);
}

/** Headers every response carries, replays included. */
export function withCommonHeaders(result: HttpResult, requestId: string): HttpResult {
  return {
    ...result,
    headers: { 'cache-control': 'no-store', ...result.headers, 'request-id': requestId },
  };
}
