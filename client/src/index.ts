/**
 * @shop-calls/client: a typed client of the Shop Calls API for apps, on Node 20+ and in browsers.
 * Types come from docs/openapi.json (schema.d.ts), requests go through openapi-fetch.
 */
export { ShopCalls, type ShopCallsOptions } from './client';
export {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ShopCallsError,
} from './errors';
export type { IdempotentRequestOptions } from './http';
export { ListPromise, type Page } from './pagination';
export type { Backoff } from './retry';
export type { RequestOptions, Sleep } from './transport';
export * from './types';
export {
  DEFAULT_TOLERANCE_SECONDS,
  type HeadersLike,
  sign,
  type SignedHeaders,
  type SignInput,
  verify,
  type VerifyOptions,
  WebhookVerificationError,
  type WebhookVerificationReason,
  webhooks,
} from './webhooks';
