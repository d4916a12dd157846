import { randomBytes } from 'node:crypto';
import { ensureTable } from '../../lib/local/dynamodb-local';
import type { Deps } from '../../shared/runtime';
import { secretDeps } from '../../shared/runtime-secrets';

export function testEndpoint(): string {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run the tests through jest (test/global-setup.ts)');
  return endpoint;
}

export const uniqueTableName = (): string => `test-${randomBytes(6).toString('hex')}`;

/** A fresh table on the run's DynamoDB Local, made current for the handlers in this file. */
export async function useFreshTable(): Promise<Deps> {
  const tableName = uniqueTableName();
  await ensureTable(testEndpoint(), tableName);
  process.env.DYNAMODB_ENDPOINT = testEndpoint();
  process.env.TABLE_NAME = tableName;
  return secretDeps();
}
