import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable, localClient, startDynamoDbLocal } from '../../lib/local/dynamodb-local';

describe('DynamoDB Local launcher', () => {
  it('keeps data in a folder across restarts when asked (a relative path is fine)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ddb-data-'));
    const dataDir = relative(process.cwd(), dir);
    try {
      const first = await startDynamoDbLocal({ dataDir });
      expect(await ensureTable(first.endpoint, 'persisted')).toBe(true);
      const c1 = localClient(first.endpoint);
      await c1.send(new PutItemCommand({ TableName: 'persisted', Item: { pk: { S: 'a' }, sk: { S: 'b' }, v: { S: 'kept' } } }));
      c1.destroy();
      await first.stop();

      const second = await startDynamoDbLocal({ dataDir });
      expect(await ensureTable(second.endpoint, 'persisted')).toBe(false);
      const c2 = localClient(second.endpoint);
      const got = await c2.send(new GetItemCommand({ TableName: 'persisted', Key: { pk: { S: 'a' }, sk: { S: 'b' } } }));
      c2.destroy();
      await second.stop();
      expect(got.Item?.v?.S).toBe('kept');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('is in memory by default: a restart starts empty', async () => {
    const first = await startDynamoDbLocal();
    await ensureTable(first.endpoint, 'ephemeral');
    await first.stop();
    const second = await startDynamoDbLocal();
    expect(await ensureTable(second.endpoint, 'ephemeral')).toBe(true);
    await second.stop();
  }, 60_000);
});
