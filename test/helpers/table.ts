import { randomBytes } from 'node:crypto';
import { ensureTable } from '../../lib/local/dynamodb-local';
import { configFromEnv } from '../../shared/config';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';

export function testEndpoint(): string {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint)
    throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run the tests through jest (test/global-setup.ts)');
  return endpoint;
}

export const uniqueTableName = (): string => `test-${randomBytes(6).toString('hex')}`;

/** A fresh table on the run's DynamoDB Local, and the API's wiring on it (the run's cursor secret and key file). */
export async function useFreshTable(): Promise<ApiDeps> {
  const tableName = uniqueTableName();
  await ensureTable(testEndpoint(), tableName);
  return apiDeps(configFromEnv({ ...process.env, DYNAMODB_ENDPOINT: testEndpoint(), TABLE_NAME: tableName }));
}
