import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Principal } from '../domain/api-keys';
import { AppError } from '../errors';
import { recordRef, type IdempotencyRecordRef, type SingleTableIdempotencyStore } from '../store/idempotency';
import type { ApiEvent } from './event';
import type { HttpResult } from './response';

const HEADER = 'idempotency-key';
/** Set in `before` only when this request took the record's lock: after/onError touch only their own record. */
const OWNED_RECORD = 'shopcalls.idempotency.ownedRecord';
type Internal = Record<string, unknown>;
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** What an idempotent operation's handler needs besides its domain's ports. */
export interface IdempotencyDeps {
  idempotency: SingleTableIdempotencyStore;
}

/**
 * Decides whether a stored answer may still be replayed, by throwing the error to answer instead.
 * An answer that carries a one-time secret needs one: the secret may no longer be in force.
 */
export type ReplayCheck = (storedBody: unknown, principal: Principal) => Promise<void>;

/**
 * The record of a request. Shop-scoped: the same header value from two shops is two records;
 * one key space for every operation, so a key reused on another operation is a 422. A replay
 * must match method, path and the parsed body (key order does not matter), and come from the
 * API key that made the request: another key of the shop never sees its answer.
 */
function recordOf(event: ApiEvent, key: string): IdempotencyRecordRef {
  const principal = event.principal;
  if (!principal) throw new Error('an Idempotency-Key was handled before the request was authorized');
  return recordRef(
    [principal.shopId, key],
    [event.requestContext?.http?.method ?? null, event.rawPath ?? null, event.jsonBody ?? null],
    { owner: principal.keyId, shopId: principal.shopId },
  );
}

/**
 * Idempotency-Key per the contract (docs/api.md): runs only when the header is present.
 * The first request takes the record's lock and, when it succeeds, stores its response;
 * a repeat gets that response back (Idempotent-Replayed: true) unless `replayable` refuses it,
 * a concurrent one a 409, a different request under the same key (or one from another API key)
 * a 422. A request that fails releases the record so the client may retry; a 409, 422 or a
 * refused replay never touches the first request's record.
 */
export function idempotent(
  store: () => SingleTableIdempotencyStore,
  replayable?: ReplayCheck,
): MiddlewareObj<ApiEvent, HttpResult, Error, Context, Internal> {
  const owned = (internal: Internal) =>
    internal[OWNED_RECORD] as { ref: IdempotencyRecordRef; token: string } | undefined;

  return {
    before: async (request) => {
      const key = request.event.headers[HEADER];
      if (key === undefined) return undefined;
      if (!VALID_KEY.test(key)) {
        throw new AppError('parameter_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', {
          param: 'Idempotency-Key',
        });
      }
      const ref = recordOf(request.event, key);
      // The lock lives as long as this invocation may (a crashed one must not hold the key for 24 h).
      const remainingMs =
        typeof request.context?.getRemainingTimeInMillis === 'function'
          ? request.context.getRemainingTimeInMillis()
          : 0;
      const outcome = await store().lock(ref, remainingMs > 0 ? remainingMs : undefined);
      switch (outcome.kind) {
        case 'acquired':
          request.internal[OWNED_RECORD] = { ref, token: outcome.token };
          return undefined;
        case 'in_progress':
          throw new AppError(
            'idempotency_key_in_use',
            'A request with this Idempotency-Key is still being processed; retry after it completes.',
          );
        case 'payload_mismatch':
          throw new AppError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different method, path or body.',
          );
        case 'other_owner':
          throw new AppError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used by another API key of this shop.',
          );
        case 'completed': {
          const stored = outcome.response as HttpResult;
          if (replayable)
            await replayable(JSON.parse(stored.body ?? 'null') as unknown, request.event.principal as Principal);
          return { ...stored, headers: { ...stored.headers, 'idempotent-replayed': 'true' } };
        }
      }
    },
    after: async (request) => {
      const lock = owned(request.internal);
      if (lock) await store().complete(lock.ref, lock.token, request.response);
    },
    onError: async (request) => {
      const lock = owned(request.internal);
      if (lock) await store().release(lock.ref, lock.token);
    },
  };
}
