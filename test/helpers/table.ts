import { randomBytes } from 'node:crypto';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable, localClient } from '../../lib/local/dynamodb-local';
import { createTableInput } from '../../shared/store/table';
import { configFromEnv } from '../../shared/config';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';

/** The run's DynamoDB Local for this test file: always the same one of the run's few (test/global-setup.ts). */
export function testEndpoint(): string {
  const endpoints = (process.env.TEST_DYNAMODB_ENDPOINTS ?? '').split(',').filter(Boolean);
  if (endpoints.length === 0)
    throw new Error('TEST_DYNAMODB_ENDPOINTS is not set: run the tests through jest (test/global-setup.ts)');
  const path = expect.getState().testPath ?? '';
  const file = path.slice(path.lastIndexOf('/test/'));
  let hash = 0;
  for (const c of file) hash = (hash * 31 + (c.codePointAt(0) ?? 0)) >>> 0;
  return endpoints[hash % endpoints.length] as string;
}

export const uniqueTableName = (): string => `test-${randomBytes(6).toString('hex')}`;

/**
 * A fresh table on the run's DynamoDB Local, and the API's wiring on it (the run's cursor secret
 * and key file). It has no stream unless asked: an emulator grows slow for every table created
 * after it has held many stream records (dropped or not), and the e2e stacks, which read their
 * streams, share these emulators with the tests that read none.
 */
export async function useFreshTable(opts: { stream?: boolean } = {}): Promise<ApiDeps> {
  const tableName = uniqueTableName();
  if (!opts.stream) await createWithoutStream(testEndpoint(), tableName);
  await ensureTable(testEndpoint(), tableName);
  return apiDeps(configFromEnv({ ...process.env, DYNAMODB_ENDPOINT: testEndpoint(), TABLE_NAME: tableName }));
}

/** The service's table, but for its stream; ensureTable then takes it as created now (it is empty). */
async function createWithoutStream(endpoint: string, tableName: string): Promise<void> {
  const { StreamSpecification: _stream, ...input } = createTableInput(tableName);
  const client = localClient(endpoint);
  try {
    await client.send(new CreateTableCommand(input));
  } finally {
    client.destroy();
  }
}
