import { createServer, type Server } from 'node:net';
import { freePort } from '../../lib/local/dynamodb-local';
import { closeChildStacks, startChildStack } from '../helpers/child-stack';

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
});
