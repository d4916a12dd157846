/**
 * The package as an app gets it: `npm run build` compiles src against the browser's lib without
 * Node's types (tsconfig.build.json), and the result runs in a bare Node, 20 (the oldest the
 * package supports, when the machine has it) as well as the one running the tests.
 */
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const client = resolve('client');

it('builds, and the build runs on each Node at hand', async () => {
  await run(process.execPath, [resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: client,
  });
  expect(existsSync(resolve(client, 'dist/index.d.ts'))).toBe(true);
  const nodes = new Set([process.execPath, '/usr/bin/node'].filter(existsSync).map((path) => realpathSync(path)));
  for (const node of nodes) {
    const { stdout } = await run(node, [resolve(client, 'test/support/smoke.mjs'), resolve(client, 'dist/index.js')]);
    const seen = JSON.parse(stdout) as { node: string };
    expect(seen).toEqual({
      node: seen.node,
      ids: ['call_1', 'call_2'],
      requests: 3,
      verified: 'webhook_endpoint.test',
    });
    expect(Number(seen.node.slice(1).split('.')[0])).toBeGreaterThanOrEqual(20);
  }
}, 60_000);
