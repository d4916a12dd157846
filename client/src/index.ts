/**
 * @shop-calls/client: a typed client of the Shop Calls API for apps, on Node 20+ and in browsers.
 * Types come from docs/openapi.json (schema.d.ts), requests go through openapi-fetch.
 */
export { ShopCalls, type ShopCallsOptions } from './client.js';
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
} from './errors.js';
export type { EventTypeFilter, FeedItem, FollowParams } from './feed.js';
export type { IdempotentRequestOptions } from './http.js';
export { ListPromise, type Page } from './pagination.js';
export type { Backoff } from './retry.js';
export type { RequestOptions, Sleep } from './transport.js';
export * from './types.js';
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
} from './webhooks.js';
