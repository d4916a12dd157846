import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import { AppError } from '../errors';
import { isSealed, type SingleTableIdempotencyStore } from '../store/idempotency';
import type { ApiEvent } from './event';
import type { HttpResult } from './response';

const HEADER = 'idempotency-key';
/** One prefix for every idempotent operation: a key reused on another operation is a 422, not a second record. */
const KEY_PREFIX = 'IDEMPOTENCY';
const OWNS_RECORD = 'shopcalls.idempotency.ownsRecord';
type Internal = Record<string, unknown>;
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

const config = new IdempotencyConfig({
  // Shop-scoped: the same header value from two shops is two records.
  eventKeyJmesPath: '[principal.shopId, headers."idempotency-key"]',
  // What must match for a replay: method, path and the parsed body (key order does not matter).
  payloadValidationJmesPath: '[requestContext.http.method, rawPath, jsonBody]',
  expiresAfterSeconds: 24 * 60 * 60,
});

/** What an idempotent operation's handler needs besides its domain's ports. */
export interface IdempotencyDeps {
  idempotency: SingleTableIdempotencyStore;
}

/**
 * Idempotency-Key per the contract, with Powertools doing the record keeping.
 * Runs only when the header is present (Powertools would otherwise treat
 * `[shopId, null]` as a real key), and forwards after/onError only when this request
 * created the in-progress record: Powertools' onError deletes the record unconditionally,
 * which would erase the first request's record on a 409 or 422 of the second.
 */
export function idempotent(persistence: () => SingleTableIdempotencyStore): MiddlewareObj<ApiEvent, HttpResult, Error, Context, Internal> {
  let powertools: ReturnType<typeof makeHandlerIdempotent> | undefined;
  const inner = () => (powertools ??= makeHandlerIdempotent({ persistenceStore: persistence(), config, keyPrefix: KEY_PREFIX }));

  return {
    before: async (request) => {
      const key = request.event.headers[HEADER];
      if (key === undefined) return undefined;
      if (!VALID_KEY.test(key)) {
        throw new AppError('parameter_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', {
          param: 'Idempotency-Key',
        });
      }
      const replay: unknown = await inner().before?.(request);
      if (replay !== undefined) {
        if (!isSealed(replay)) throw new Error('stored idempotent response is not sealed');
        const stored = (await persistence().unseal(request.event as never, replay)) as HttpResult;
        return { ...stored, headers: { ...stored.headers, 'idempotent-replayed': 'true' } };
      }
      request.internal[OWNS_RECORD] = true;
      return undefined;
    },
    after: async (request) => {
      if (request.internal[OWNS_RECORD]) await inner().after?.(request);
    },
    onError: async (request) => {
      if (request.internal[OWNS_RECORD]) await inner().onError?.(request);
    },
  };
}
