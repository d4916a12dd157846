import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { Dynamo } from './client';
import { TABLE } from './table';
import { keys } from './keys';

/**
 * Powertools' DynamoDB persistence on the single table. Its record key
 * (`IDEMPOTENCY#<hash>`) becomes the partition key with a fixed sort key, so every
 * record has its own partition instead of all sharing one static partition.
 */
export class SingleTableIdempotencyStore extends DynamoDBPersistenceLayer {
  constructor(db: Dynamo) {
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
}
