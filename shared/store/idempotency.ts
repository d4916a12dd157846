import { createHash, randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { SecretCipher } from '../domain/secrets';
import { isConditionFailed, type Dynamo } from './client';
import { TABLE } from './table';
import { keys } from './keys';

/**
 * Idempotency records on the single table, in the item layout and hashes of Powertools
 * idempotency, so what its documentation says of a record holds here:
 * pk `IDEMPOTENCY#<md5 base64 of the key parts>`, sk `IDEMPOTENCY`, `status` INPROGRESS or
 * COMPLETED, `expires_at` (epoch seconds, also the table's TTL), `in_progress_expiration`
 * (epoch ms: the lock dies with the Lambda invocation that took it), `validation` (md5
 * base64 of the request parts that must match for a replay) and `data` (the response).
 * The stored response is encrypted: creating a webhook endpoint returns its signing secret,
 * which must not sit in the table (or its backups) in clear. `owner` (not in Powertools'
 * layout, which ignores it) names the API key that made the request: a record answers no other.
 */

const PREFIX = 'IDEMPOTENCY';
const STATUS = { inProgress: 'INPROGRESS', completed: 'COMPLETED', expired: 'EXPIRED' } as const;
const ATTR = {
  status: 'status',
  expiry: TABLE.ttlAttribute,
  lockExpiry: 'in_progress_expiration',
  validation: 'validation',
  data: 'data',
  lockToken: 'lock_token',
  owner: 'owner',
} as const;
/**
 * Attempts to take the lock when the record found has expired but TTL has not deleted it yet (as
 * Powertools does: 1 + 2 retries).
 */
const ATTEMPTS = 3;

/** A stored response as it sits in the table: encrypted, because some carry a signing secret. */
export interface SealedResponse {
  sealed: string;
}

export const isSealed = (value: unknown): value is SealedResponse =>
  typeof value === 'object' && value !== null && typeof (value as SealedResponse).sealed === 'string';

/**
 * One request's record: its key, the hash of what a replay must match, who may have it replayed,
 * and the shop whose key seals its response.
 */
export interface IdempotencyRecordRef {
  key: string;
  payloadHash: string;
  /** The API key that made the request. */
  owner: string;
  shopId: string;
}

export type LockOutcome =
  /** `token` names this request's lock: its completion and its release touch only that lock. */
  | { kind: 'acquired'; token: string }
  | { kind: 'in_progress' }
  | { kind: 'payload_mismatch' }
  | { kind: 'other_owner' }
  | { kind: 'completed'; response: unknown };

/**
 * Object keys sorted case-insensitively, all the way down: Powertools' `deepSort`, comparator
 * included, so hashes stay equal.
 */
function deepSort(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSort);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.keys(record)
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1))
    .reduce<Record<string, unknown>>((sorted, k) => {
      sorted[k] = deepSort(record[k]);
      return sorted;
    }, {});
}

const md5 = (parts: unknown[]): string =>
  createHash('md5')
    .update(JSON.stringify(deepSort(parts)))
    .digest('base64');

/**
 * The record of a request: `keyParts` name it (absent values count as null), `payloadParts` must
 * match for a replay, and only `owner` may replay it. The owner is kept beside the hash, not in
 * it, so the hashes stay Powertools' own.
 */
export const recordRef = (
  keyParts: unknown[],
  payloadParts: unknown[],
  by: { owner: string; shopId: string },
): IdempotencyRecordRef => ({
  key: `${PREFIX}#${md5(keyParts)}`,
  payloadHash: md5(payloadParts),
  owner: by.owner,
  shopId: by.shopId,
});

interface StoredRecord {
  status?: string;
  lock_token?: string;
  expires_at?: number;
  validation?: string;
  data?: unknown;
  owner?: string;
}

export class SingleTableIdempotencyStore {
  constructor(
    private readonly db: Dynamo,
    private readonly cipher: () => SecretCipher,
    private readonly lifetimeSeconds = 24 * 60 * 60,
    private readonly now: () => number = Date.now,
  ) {}

  private itemKey(ref: IdempotencyRecordRef): Record<string, string> {
    const key = keys.idempotency(ref.key);
    return { [TABLE.partitionKey]: key.pk, [TABLE.sortKey]: key.sk };
  }

  private expiry(): number {
    return Math.round(this.now() / 1000 + this.lifetimeSeconds);
  }

  /**
   * Takes the in-progress lock, unless a live record holds the key: then the stored response
   * (decrypted), or why there is none to give. `lockMs` is how long the lock may live (the
   * invocation's remaining time); without it the lock lasts as long as the record.
   */
  async lock(ref: IdempotencyRecordRef, lockMs: number | undefined): Promise<LockOutcome> {
    // Names this request's lock: a put the SDK retried after its answer was lost meets its own
    // record, which is this request's lock, not another request's.
    const token = randomUUID();
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      let existing: StoredRecord | null;
      try {
        existing = await this.tryPut(ref, lockMs, token);
      } catch (err) {
        // The put may have landed though the SDK gave up on its answer: a lock nobody owns would
        // refuse the client's retry (409) until it expires. Take it back if it is ours.
        await this.releaseOwn(ref, token).catch(() => undefined);
        throw err;
      }
      if (!existing || (existing.status === STATUS.inProgress && existing.lock_token === token))
        return { kind: 'acquired', token };
      if (existing.owner !== ref.owner) return { kind: 'other_owner' };
      if (existing.validation !== ref.payloadHash) return { kind: 'payload_mismatch' };
      const expired = existing.expires_at !== undefined && this.now() / 1000 > existing.expires_at;
      if (expired || existing.status === STATUS.expired) continue;
      if (existing.status === STATUS.inProgress) return { kind: 'in_progress' };
      if (existing.status !== STATUS.completed)
        throw new Error(`idempotency record has an unknown status: ${String(existing.status)}`);
      if (!isSealed(existing.data)) throw new Error('stored idempotent response is not sealed');
      return {
        kind: 'completed',
        response: JSON.parse(await this.cipher().decrypt(existing.data.sealed, ref.key, ref.shopId)),
      };
    }
    throw new Error('idempotency record expired while the lock was being taken');
  }

  /** The put that takes the lock; the record that refused it, when one did. */
  private async tryPut(
    ref: IdempotencyRecordRef,
    lockMs: number | undefined,
    token: string,
  ): Promise<StoredRecord | null> {
    const now = this.now();
    const item = {
      ...this.itemKey(ref),
      [ATTR.expiry]: this.expiry(),
      [ATTR.status]: STATUS.inProgress,
      [ATTR.validation]: ref.payloadHash,
      [ATTR.lockToken]: token,
      ...(lockMs !== undefined ? { [ATTR.lockExpiry]: now + lockMs } : {}),
      [ATTR.owner]: ref.owner,
    };
    try {
      await this.db.doc.put({
        TableName: this.db.tableName,
        Item: item,
        // New, expired, or locked by an invocation that has since ended.
        ConditionExpression:
          'attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress AND ' +
          'attribute_exists(#lock) AND #lock < :now_ms)',
        ExpressionAttributeNames: {
          '#id': TABLE.partitionKey,
          '#expiry': ATTR.expiry,
          '#lock': ATTR.lockExpiry,
          '#status': ATTR.status,
        },
        ExpressionAttributeValues: { ':now': now / 1000, ':now_ms': now, ':inprogress': STATUS.inProgress },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return null;
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      // Marshalled: the document client leaves an error's item as the service sent it.
      if (err.Item) return unmarshall(err.Item) as StoredRecord;
      const out = await this.db.doc.get({ TableName: this.db.tableName, Key: this.itemKey(ref), ConsistentRead: true });
      if (!out.Item) throw new Error('idempotency record refused the lock but could not be read', { cause: err });
      return out.Item as StoredRecord;
    }
  }

  /** The request succeeded: its response, encrypted under the record's key, is kept for replays. */
  /**
   * Stores the response under the lock `token` took. A request that outlived its lock finds
   * another request's lock (or answer) there instead: that one stands, and this answer is not
   * stored (its client has it).
   */
  async complete(ref: IdempotencyRecordRef, token: string, response: unknown): Promise<void> {
    const sealed = await this.cipher().encrypt(JSON.stringify(response), ref.key, ref.shopId);
    try {
      await this.db.doc.update({
        TableName: this.db.tableName,
        Key: this.itemKey(ref),
        UpdateExpression: 'SET #expiry = :expiry, #status = :status, #data = :data, #validation = :validation',
        ConditionExpression: '#token = :token AND #status = :inprogress',
        ExpressionAttributeNames: {
          '#expiry': ATTR.expiry,
          '#status': ATTR.status,
          '#data': ATTR.data,
          '#validation': ATTR.validation,
          '#token': ATTR.lockToken,
        },
        ExpressionAttributeValues: {
          ':expiry': this.expiry(),
          ':status': STATUS.completed,
          ':data': { sealed } satisfies SealedResponse,
          ':validation': ref.payloadHash,
          ':token': token,
          ':inprogress': STATUS.inProgress,
        },
      });
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
    }
  }

  /** Deletes the record only if it is the lock `token` took. */
  private async releaseOwn(ref: IdempotencyRecordRef, token: string): Promise<void> {
    try {
      await this.db.doc.delete({
        TableName: this.db.tableName,
        Key: this.itemKey(ref),
        ConditionExpression: '#token = :token AND #status = :inprogress',
        ExpressionAttributeNames: { '#token': ATTR.lockToken, '#status': ATTR.status },
        ExpressionAttributeValues: { ':token': token, ':inprogress': STATUS.inProgress },
      });
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
    }
  }

  /** The request failed: its lock goes, so the client may retry with the same key (another request's lock stays). */
  async release(ref: IdempotencyRecordRef, token: string): Promise<void> {
    await this.releaseOwn(ref, token);
  }
}
