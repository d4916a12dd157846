import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';

/** The table's document client over its DynamoDB client, as the functions build it, and one GetItem. */
export async function getItem(): Promise<void> {
  const doc = DynamoDBDocument.from(new DynamoDBClient({}));
  await doc.get({ TableName: process.env.TABLE_NAME, Key: { pk: 'SHOP#reference', sk: 'PROFILE' }, ConsistentRead: true });
}
