/** `npm run dynamodb:fetch`: puts DynamoDB Local in the cache (CI runs it once before the tests). */
import { ensureDynamoDbLocal } from '../lib/local/dynamodb-jar';

console.log(`DynamoDB Local: ${ensureDynamoDbLocal()}`);
