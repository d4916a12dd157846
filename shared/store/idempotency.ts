import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import type { SecretCipher } from '../domain/secrets';
import type { Dynamo } from './client';
import { TABLE } from './table';
import { keys } from './keys';

/** A stored response as it sits in the table: encrypted, because some carry a signing secret. */
export interface SealedResponse {
  sealed: string;
}

export const isSealed = (value: unknown): value is SealedResponse =>
  typeof value === 'object' && value !== null && typeof (value as SealedResponse).sealed === 'string';

/**
 * Powertools' DynamoDB persistence on the single table.
 * - Its record key (`IDEMPOTENCY#<hash>`) becomes the partition key with a fixed sort key,
 *   so every record has its own partition instead of all sharing one static partition.
 * - The response it keeps for replays is encrypted: creating a webhook endpoint returns
 *   its signing secret, which must not sit in the table (or its backups) in clear.
 */
export class SingleTableIdempotencyStore extends DynamoDBPersistenceLayer {
  constructor(
    db: Dynamo,
    private readonly cipher: () => SecretCipher,
  ) {
    super({
      tableName: db.tableName,
      awsSdkV3Client: db.client,
      keyAttr: TABLE.partitionKey,
      expiryAttr: TABLE.ttlAttribute,
    });
  }

  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    const key = keys.idempotency(idempotencyKey);
    return { pk: { S: key.pk }, sk: { S: key.sk } };
  }

  override async saveSuccess(data: JSONValue, result: JSONValue): Promise<void> {
    const context = this.getHashedIdempotencyKey(data);
    const sealed = await this.cipher().encrypt(JSON.stringify(result), context);
    return super.saveSuccess(data, { sealed } satisfies SealedResponse);
  }

  /** The stored response of a replay, decrypted. */
  async unseal(data: JSONValue, stored: SealedResponse): Promise<unknown> {
    return JSON.parse(await this.cipher().decrypt(stored.sealed, this.getHashedIdempotencyKey(data)));
  }
}
