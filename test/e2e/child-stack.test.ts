import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { freePort, localClient } from '../../lib/local/dynamodb-local';
import { closeChildStacks, startChildStack } from '../helpers/child-stack';
import { fileEmulator } from '../helpers/stack';

/** A port something else listens on, as when another process binds it between the pick and the child's bind. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server };
}

describe('the child-stack harness (the `npm start` entry as a child process)', () => {
  afterAll(() => closeChildStacks(), 60_000);

  // The start that found its port taken had created and seeded the table with DYNAMODB_DATA_DIR: it drops it, so
  // the next start seeds again and prints a key that works.
  it('starts on another port when its API port is taken before the child binds it, counting one start', async () => {
    const taken = await takenPort();
    try {
      const picked: number[] = [];
      // The DynamoDB port first, then the API port: the taken one.
      const ports = [await freePort(), taken.port];
      const stack = await startChildStack({
        pickPort: async () => {
          const port = ports.shift() ?? (await freePort());
          picked.push(port);
          return port;
        },
      });
      expect(stack.starts).toBe(1);
      // Another port for the API (a free one is picked again; should that one be taken too, the one after it).
      expect(picked.length).toBeGreaterThanOrEqual(3);
      expect(new URL(stack.url).port).toBe(String(picked.at(-1)));
      expect((await stack.api('GET', '/v1/event-types', { key: stack.writeKey })).status).toBe(200);
    } finally {
      taken.server.close();
    }
  }, 180_000);

  it('on a DynamoDB Local it is given: launches none, and the table outlives a SIGKILL of the app', async () => {
    const db = await fileEmulator();
    const stack = await startChildStack({ dynamodbEndpoint: db.endpoint });
    expect(stack.dynamodbEndpoint).toBe(db.endpoint);
    // The app runs in a process group of its own, where its own DynamoDB Local would run too.
    const javaInGroup = spawnSync('pgrep', ['-g', String(stack.appPid()), 'java'], { encoding: 'utf8' });
    expect(javaInGroup.stdout.trim()).toBe('');
    await stack.sigkill();
    const client = localClient(db.endpoint);
    try {
      const table = await client.send(new DescribeTableCommand({ TableName: stack.tableName }));
      expect(table.Table?.TableStatus).toBe('ACTIVE');
    } finally {
      client.destroy();
    }
    // The same table again: nothing seeded a second time (the harness would throw), the first key still works.
    await stack.restart();
    expect(stack.starts).toBe(2);
    expect((await stack.api('GET', '/v1/event-types', { key: stack.writeKey })).status).toBe(200);
  }, 180_000);
});
