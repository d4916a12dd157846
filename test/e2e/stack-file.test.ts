import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/local/dynamodb-local';
import type { StackFile } from '../../lib/local/stack-file';
import { call } from '../helpers/http';

/**
 * `npm start` on ports nobody would guess, then the tools a newcomer runs next with no flag and
 * no variable: they find the stack in the file it records. Only LOCAL_STACK_FILE is set, to
 * keep the test away from the checkout's .local/stack.json (a developer's stack may be using it).
 */
describe('npm start records where it runs; listen, trigger, receiver and smoke find it there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stack-file-'));
  const stackFile = join(dir, 'stack.json');
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** What a newcomer's shell has: none of the stack's settings, only the file's location. */
  function shellEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, LOCAL_STACK_FILE: stackFile, POWERTOOLS_LOG_LEVEL: 'WARN' };
    for (const name of [
      'DYNAMODB_ENDPOINT',
      'TABLE_NAME',
      'SECRETS_KEY_FILE',
      'PORT',
      'DYNAMODB_PORT',
      'SQS_PORT',
      'INGEST_QUEUE_URL',
      'WEBHOOK_SECRET',
    ])
      delete env[name];
    return env;
  }

  function run(command: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
    const child = spawn(command[0] as string, command.slice(1), {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    return { child, output: () => output };
  }

  async function until(probe: () => boolean, what: string, output: () => string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const tool = (script: string, args: string[], env: NodeJS.ProcessEnv = shellEnv()) =>
    spawnSync('node_modules/.bin/tsx', [script, ...args], { env, encoding: 'utf8' });

  it('on non-default ports: the banner pastes, listen + trigger deliver verified with no flags, Ctrl-C removes the file', async () => {
    const [apiPort, dbPort, sqsPort, listenPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const env = {
      ...shellEnv(),
      PORT: String(apiPort),
      DYNAMODB_PORT: String(dbPort),
      SQS_PORT: String(sqsPort),
      LISTEN_PORT: String(listenPort),
      SECRETS_KEY_FILE: join(dir, 'secrets.key'),
      OUTBOX_DIR: join(dir, 'outbox'),
    };
    const stack = run([process.execPath, '--import', 'tsx', 'bin/local.ts'], env);
    await until(() => stack.output().includes('API listening on'), 'npm start', stack.output);

    const recorded = JSON.parse(readFileSync(stackFile, 'utf8')) as StackFile;
    expect(recorded).toMatchObject({
      pid: stack.child.pid,
      api_url: `http://127.0.0.1:${apiPort}`,
      portal_url: `http://127.0.0.1:${apiPort}/portal`,
      table: { endpoint: `http://127.0.0.1:${dbPort}`, name: 'shop-calls', region: 'us-east-1' },
      secrets_key_file: join(dir, 'secrets.key'),
      demo_shop_id: expect.stringMatching(/^shop_/),
      listen: { port: listenPort },
      receiver: { port: 4000 },
    });

    // The banner's two lines, as pasted: the real key, and a request that answers.
    const exportLine = /^ {2}export KEY=(sk_test_\w+)$/m.exec(stack.output());
    expect(exportLine?.[1]).toBe(/Write key:\s+(sk_test_\w+)/.exec(stack.output())?.[1]);
    const curlLine = /^ {2}(curl .*)$/m.exec(stack.output())?.[1];
    expect(curlLine).toBe(`curl -H "Authorization: Bearer $KEY" http://127.0.0.1:${apiPort}/v1/calls`);
    const url = /(http\S+)$/.exec(curlLine as string)?.[1] as string;
    const calls = await call(url.replace(/\/v1\/calls$/, ''), 'GET', '/v1/calls', { key: exportLine?.[1] });
    expect(calls.status).toBe(200);
    expect((calls.json.data as unknown[]).length).toBeGreaterThan(0);
    expect(stack.output()).toContain(`First webhook: \`LOCAL_STACK_FILE=`);

    // As `npm run listen` runs it: no tsx parent relaying Ctrl-C, so the listener disables its endpoint first.
    const listener = run([process.execPath, '--import', 'tsx', 'bin/listen.ts'], shellEnv());
    await until(() => listener.output().includes('Trigger one:'), 'npm run listen', listener.output);
    expect(listener.output()).toContain(
      `Listening on http://127.0.0.1:${listenPort}/webhooks for shop ${recorded.demo_shop_id}`,
    );

    const triggered = tool('bin/cli.ts', ['trigger', 'call.completed']);
    expect(triggered.stderr).toContain(`on DynamoDB Local at http://127.0.0.1:${dbPort}`);
    expect(triggered.status).toBe(0);
    const eventId = /Triggered call.completed (evt_\w+)/.exec(triggered.stdout)?.[1];
    await until(
      () => listener.output().includes(`✓ verified call.completed ${eventId}`),
      'the verified delivery',
      listener.output,
    );

    // The receiver takes its secret from the environment only, and says how to get one from this stack.
    const bare = tool('bin/receiver.ts', []);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('WEBHOOK_SECRET is not set');
    expect(bare.stderr).toContain(`curl -s -X POST http://127.0.0.1:${apiPort}/v1/webhook-endpoints`);

    // The local smoke test finds the API and the table the same way.
    const smoke = tool('bin/smoke.ts', ['--local', '--timeout-seconds', '45']);
    expect(smoke.stdout).toContain(`Smoke test of http://127.0.0.1:${apiPort} (table shop-calls)`);
    expect([smoke.status, smoke.stdout]).toEqual([
      0,
      expect.stringMatching(/PASS: shop shop_\w+, call call_\w+ through the ingest queue, event evt_\w+/),
    ]);
    // The ingest queue of this stack, on its port, as the stack file recorded it.
    expect(smoke.stdout).toContain(`sent to the ingest queue http://127.0.0.1:${sqsPort}/`);

    listener.child.kill('SIGINT');
    await once(listener.child, 'exit');
    stack.child.kill('SIGINT');
    const [code] = (await once(stack.child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(existsSync(stackFile)).toBe(false);
  }, 150_000);

  it('a file left by a stack that died says "is `npm start` running?", not ECONNREFUSED', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid; // a pid that has exited
    const nothing = await freePort();
    const stale: StackFile = {
      pid: dead,
      started_at: new Date().toISOString(),
      api_url: `http://127.0.0.1:${nothing}`,
      portal_url: `http://127.0.0.1:${nothing}/portal`,
      table: { endpoint: `http://127.0.0.1:${nothing}`, name: 'shop-calls', region: 'us-east-1' },
      secrets_key_file: join(dir, 'secrets.key'),
      demo_shop_id: null,
      listen: { port: 0 },
      receiver: { port: 4000 },
      ingest_queue: {
        url: `http://127.0.0.1:${nothing}/queue/ingest`,
        dlq_url: `http://127.0.0.1:${nothing}/queue/ingest-dlq`,
      },
    };
    writeFileSync(stackFile, JSON.stringify(stale));
    const hint = `nothing answers at http://127.0.0.1:${nothing}: is \`npm start\` running? (${stackFile} was written by one that has stopped, pid ${dead})`;

    const cli = tool('bin/cli.ts', ['trigger', 'call.completed']);
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain(`Failed: ${hint}`);
    const listen = tool('bin/listen.ts', []);
    expect(listen.status).toBe(1);
    expect(listen.stderr).toContain(`Could not listen: ${hint}`);
    expect(`${cli.stderr}${listen.stderr}`).not.toContain('ECONNREFUSED');
  }, 60_000);
});
