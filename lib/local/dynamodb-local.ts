import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  ResourceInUseException,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, DATA_MODEL_VERSION } from '../../shared/store/table';
import { ensureDynamoDbLocal } from './dynamodb-jar';
import { javaModules, LAUNCHER_CLASS, loopbackClassPath } from './dynamodb-loopback';

export interface DynamoDbLocalOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Keep data in this folder across restarts; in memory when absent. */
  dataDir?: string;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (!address || typeof address === 'string') throw new Error('could not find a free port');
  return address.port;
}

/** The modules of the installed Java; throws when there is none that runs. */
function assertJava(): string {
  const modules = javaModules();
  if (modules === null)
    throw new Error('DynamoDB Local needs Java 17+. Install it, e.g. `apt-get install -y openjdk-17-jre-headless`.');
  return modules;
}

/**
 * How the JVM starts DynamoDB Local: on 127.0.0.1 through the launcher (./dynamodb-loopback.ts),
 * else the plain jar.
 */
function mainArgs(emulator: string, modules: string): string[] {
  const classPath = loopbackClassPath(emulator, dirname(emulator), modules);
  if (classPath) return ['-cp', classPath, LAUNCHER_CLASS];
  console.warn(
    'DynamoDB Local listens on every interface: this Java has no jdk.compiler module to build ' +
      'its loopback launcher (install a full JDK 17+ to keep it on 127.0.0.1).',
  );
  return ['-jar', join(emulator, 'DynamoDBLocal.jar')];
}

/**
 * The JVM runs under a small shell watchdog that holds a pipe from this process: when
 * the pipe closes (stop(), Ctrl-C, a crash, even SIGKILL of node) the watchdog kills
 * the JVM, so no java process outlives its owner.
 */
const WATCHDOG =
  'java "$@" >/dev/null 2>&1 & j=$!; trap \'kill $j 2>/dev/null; exit 0\' INT TERM; while read ' +
  '-r _; do :; done; kill $j 2>/dev/null; wait $j';

export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const modules = assertJava();
  const emulator = ensureDynamoDbLocal();
  const port = options.port || (await freePort());
  // Absolute: the JVM runs in the cache folder, not here.
  const storage = options.dataDir ? ['-dbPath', resolve(options.dataDir)] : ['-inMemory'];
  if (options.dataDir) mkdirSync(resolve(options.dataDir), { recursive: true });
  const args = [
    `-Djava.library.path=${join(emulator, 'DynamoDBLocal_lib')}`,
    '-Xms64m',
    // The client compiler only: on a 2-core machine C2's compile threads compete with the
    // requests for a minute or more, and a fresh emulator then answers at two thirds of the rate
    // it does without them.
    '-XX:TieredStopAtLevel=1',
    ...mainArgs(emulator, modules),
    ...storage,
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  // In the cache folder: DynamoDB Local writes a metadata file into its working directory.
  const child: ChildProcess = spawn('sh', ['-c', WATCHDOG, 'dynamodb-local', ...args], {
    stdio: ['pipe', 'ignore', 'inherit'],
    cwd: emulator,
  });
  const exited = once(child, 'exit');
  const endpoint = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await waitUntilReady(endpoint, child);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, port, pid: child.pid ?? -1, stop };
}

// A JVM starting beside a busy machine's other work can take tens of seconds; the deadline only
// bounds a start that will never answer.
async function waitUntilReady(endpoint: string, child: ChildProcess, timeoutMs = 90_000): Promise<void> {
  const client = localClient(endpoint);
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null)
        throw new Error(`DynamoDB Local exited with code ${child.exitCode} (is the port in use?)`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms`);
  } finally {
    client.destroy();
  }
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

/** Deletes the table (a start that failed after creating it: the next start creates and seeds it afresh). */
export async function dropTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
  } finally {
    client.destroy();
  }
}

const isEmpty = async (client: DynamoDBClient, tableName: string) =>
  ((await client.send(new ScanCommand({ TableName: tableName, Limit: 1, ConsistentRead: true }))).Count ?? 0) === 0;

/** The item that records the data model a local table holds (the cloud table carries it as a tag). */
const DATA_MODEL_KEY = { pk: { S: 'LOCAL#DATA_MODEL' }, sk: { S: 'VERSION' } };

/**
 * Creates the table if absent, recording its data-model version; returns true when it was created now (an
 * empty store). A table kept (DYNAMODB_DATA_DIR) from code of another data model is refused with what to do:
 * 0.x releases migrate no data, and this code would misread its items. An empty table without a version is
 * one whose start stopped between creating it and recording its version: it is taken as created now.
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<boolean> {
  const client = localClient(endpoint);
  const recordVersion = () =>
    client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { ...DATA_MODEL_KEY, version: { N: String(DATA_MODEL_VERSION) } },
      }),
    );
  try {
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
      await recordVersion();
      return true;
    } catch (err) {
      if (!(err instanceof ResourceInUseException)) throw err;
    }
    const read = await client.send(
      new GetItemCommand({ TableName: tableName, Key: DATA_MODEL_KEY, ConsistentRead: true }),
    );
    const found = read.Item?.version?.N;
    if (found === undefined && (await isEmpty(client, tableName))) {
      await recordVersion();
      return true;
    }
    if (found !== String(DATA_MODEL_VERSION))
      throw new Error(
        `The table ${tableName} holds ${found ? `data model ${found}` : 'no data-model version'}, and this code ` +
          `reads version ${DATA_MODEL_VERSION}: 0.x releases migrate no data. Start on a new DYNAMODB_DATA_DIR ` +
          '(or delete the old one) to begin with a fresh table.',
      );
    return false;
  } finally {
    client.destroy();
  }
}
