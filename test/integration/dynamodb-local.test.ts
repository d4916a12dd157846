import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CreateTableCommand, DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable, localClient, startDynamoDbLocal } from '../../lib/local/dynamodb-local';
import { createTableInput, DATA_MODEL_VERSION } from '../../shared/store/table';
import { testEndpoint, uniqueTableName } from '../helpers/table';

describe('DynamoDB Local launcher', () => {
  it('keeps data in a folder across restarts when asked (a relative path is fine)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ddb-data-'));
    const dataDir = relative(process.cwd(), dir);
    try {
      const first = await startDynamoDbLocal({ dataDir });
      expect(await ensureTable(first.endpoint, 'persisted')).toBe(true);
      const c1 = localClient(first.endpoint);
      await c1.send(
        new PutItemCommand({ TableName: 'persisted', Item: { pk: { S: 'a' }, sk: { S: 'b' }, v: { S: 'kept' } } }),
      );
      c1.destroy();
      await first.stop();

      const second = await startDynamoDbLocal({ dataDir });
      expect(await ensureTable(second.endpoint, 'persisted')).toBe(false);
      const c2 = localClient(second.endpoint);
      const got = await c2.send(
        new GetItemCommand({ TableName: 'persisted', Key: { pk: { S: 'a' }, sk: { S: 'b' } } }),
      );
      c2.destroy();
      await second.stop();
      expect(got.Item?.v?.S).toBe('kept');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  // On the run's DynamoDB Local: these two need a table, not a launch.
  it('refuses a kept table of another data model, or of none, saying what to do', async () => {
    const endpoint = testEndpoint();
    const older = uniqueTableName();
    const client = localClient(endpoint);
    const versionKey = { pk: { S: 'LOCAL#DATA_MODEL' }, sk: { S: 'VERSION' } };
    try {
      expect(await ensureTable(endpoint, older)).toBe(true);
      expect(await ensureTable(endpoint, older)).toBe(false);
      await client.send(
        new PutItemCommand({
          TableName: older,
          Item: { ...versionKey, version: { N: String(DATA_MODEL_VERSION - 1) } },
        }),
      );
      await expect(ensureTable(endpoint, older)).rejects.toThrow(
        `holds data model ${DATA_MODEL_VERSION - 1}, and this code reads version ${DATA_MODEL_VERSION}`,
      );
      // A table from before data-model versions: items, and no version among them.
      await client.send(new DeleteItemCommand({ TableName: older, Key: versionKey }));
      await client.send(
        new PutItemCommand({ TableName: older, Item: { pk: { S: 'SHOP#shop_1' }, sk: { S: 'SHOP' } } }),
      );
      await expect(ensureTable(endpoint, older)).rejects.toThrow(/holds no data-model version.*new DYNAMODB_DATA_DIR/);
    } finally {
      client.destroy();
    }
  }, 60_000);

  it('takes an empty table without a version (a start stopped before recording it) as created now', async () => {
    const endpoint = testEndpoint();
    const interrupted = uniqueTableName();
    const client = localClient(endpoint);
    const versionKey = { pk: { S: 'LOCAL#DATA_MODEL' }, sk: { S: 'VERSION' } };
    try {
      await client.send(new CreateTableCommand(createTableInput(interrupted)));
      expect(await ensureTable(endpoint, interrupted)).toBe(true);
      const recorded = await client.send(
        new GetItemCommand({ TableName: interrupted, Key: versionKey, ConsistentRead: true }),
      );
      expect(recorded.Item?.version?.N).toBe(String(DATA_MODEL_VERSION));
      expect(await ensureTable(endpoint, interrupted)).toBe(false);
    } finally {
      client.destroy();
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

  it('listens on 127.0.0.1 only, not on every interface', async () => {
    const db = await startDynamoDbLocal();
    try {
      expect(listeningAddresses(db.port)).toEqual(['127.0.0.1']);
      // And a connection to this machine's other address is refused (when it has one).
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal);
      if (external) await expect(connects(external.address, db.port)).resolves.toBe(false);
      await expect(connects('127.0.0.1', db.port)).resolves.toBe(true);
    } finally {
      await db.stop();
    }
  }, 60_000);
});

/**
 * The local addresses of the listening TCP sockets on `port`, from the kernel's tables
 * (IPv4-mapped IPv6 shown as IPv4).
 */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local?.endsWith(`:${hexPort}`)) continue; // 0A: LISTEN
      const hex = local.split(':')[0] as string;
      // The last 4 bytes, little-endian per 32-bit word: the IPv4 address (or the mapped one).
      const v4 =
        hex
          .slice(-8)
          .match(/../g)
          ?.reverse()
          .map((b) => parseInt(b, 16))
          .join('.') ?? '';
      const mapped = hex.length === 32 && hex.slice(0, 24) === '0000000000000000FFFF0000';
      found.push(hex.length === 8 || mapped ? v4 : hex === '0'.repeat(32) ? '::' : hex);
    }
  }
  return found;
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}
