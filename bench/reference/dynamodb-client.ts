/** Cold-start reference: only the DynamoDB client every table-backed function needs, bundled the same way. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

let doc: DynamoDBDocumentClient | undefined;

export const handler = async (event: { key: { pk: string; sk: string } }) => {
  doc ??= DynamoDBDocumentClient.from(new DynamoDBClient({}));
  return doc.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: event.key }));
};
