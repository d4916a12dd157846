import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';

type Doc = DynamoDBDocument;
const pk = 'SHOP#reference';

/** One request of each operation, of the kind the stores send (keys, a condition, a few attributes). */
const REQUESTS: Record<string, (doc: Doc, TableName: string) => Promise<unknown>> = {
  GetItem: (doc, TableName) => doc.get({ TableName, Key: { pk, sk: 'PROFILE' }, ConsistentRead: true }),
  Query: (doc, TableName) =>
    doc.query({
      TableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': pk, ':p': 'CALL#' },
      ScanIndexForward: false,
      Limit: 20,
      ConsistentRead: true,
    }),
  PutItem: (doc, TableName) =>
    doc.put({
      TableName,
      Item: { pk, sk: 'CALL#1', id: 'call_1', status: 'completed', at: new Date(0).toISOString() },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  UpdateItem: (doc, TableName) =>
    doc.update({
      TableName,
      Key: { pk, sk: 'PROFILE' },
      UpdateExpression: 'SET #n = :n, version = version + :one',
      ConditionExpression: 'version = :v',
      ExpressionAttributeNames: { '#n': 'name' },
      ExpressionAttributeValues: { ':n': 'Reference', ':one': 1, ':v': 1 },
      ReturnValues: 'ALL_NEW',
    }),
  DeleteItem: (doc, TableName) => doc.delete({ TableName, Key: { pk, sk: 'CALL#1' } }),
  BatchGetItem: (doc, TableName) =>
    doc.batchGet({
      RequestItems: {
        [TableName]: {
          Keys: [
            { pk, sk: 'CALL#1' },
            { pk, sk: 'PROFILE' },
          ],
          ConsistentRead: true,
        },
      },
    }),
  BatchWriteItem: (doc, TableName) =>
    doc.batchWrite({ RequestItems: { [TableName]: [{ PutRequest: { Item: { pk, sk: 'CALL#2', id: 'call_2' } } }] } }),
  TransactWriteItems: (doc, TableName) =>
    doc.transactWrite({
      TransactItems: [
        {
          Put: { TableName, Item: { pk, sk: 'CALL#3', id: 'call_3' }, ConditionExpression: 'attribute_not_exists(pk)' },
        },
        {
          Update: {
            TableName,
            Key: { pk, sk: 'PROFILE' },
            UpdateExpression: 'SET calls = calls + :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
      ],
    }),
};

/** The table's document client over its DynamoDB client, as the functions build it, and one request of each of `operations`. */
export async function callDynamoDB(operations: readonly string[]): Promise<void> {
  const doc = DynamoDBDocument.from(new DynamoDBClient({}));
  for (const operation of operations) {
    const request = REQUESTS[operation];
    if (!request) throw new Error(`the DynamoDB reference makes no ${operation} request`);
    await request(doc, process.env.TABLE_NAME ?? '');
  }
}
