import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/local/dynamodb-local';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver } from '../helpers/receiver';
import { testEndpoint, uniqueTableName } from '../helpers/table';

/** PIDs of java processes listening as DynamoDB Local on this port. */
function dynamoJavaPids(port: number): string[] {
  // Anchored on `java`, so the watchdog shell (whose arguments repeat the command) is not counted.
  const out = spawnSync('pgrep', ['-f', `^java .*DynamoDBLocal.jar .*-port ${port}$`], { encoding: 'utf8' });
  return out.stdout.split('\n').filter(Boolean);
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One request as raw bytes (no client would send it); what came back before the server closed. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(bytes);
  });
}

describe('npm start (the real entry point, as a child process)', () => {
  const started: ChildProcess[] = [];
  afterEach(async () => {
    await closeReceivers();
    // Whatever a failed assertion left running: the whole process group.
    for (const child of started.splice(0)) {
      if (child.exitCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });

  /** The entry with these variables, its stdout and stderr collected. */
  function spawnLocal(env: Record<string, string>): { child: ChildProcess; output: () => string } {
    // As `npm start` runs it (`node --import tsx`, no tsx parent relaying signals), so Ctrl-C reaches the app itself.
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      // SQS_PORT 0: a free port for the local queues, as other tests run stacks at the same time.
      env: { ...process.env, DYNAMODB_ENDPOINT: '', POWERTOOLS_LOG_LEVEL: 'WARN', SQS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    return { child, output: () => output };
  }

  async function start(
    env: Record<string, string> = {},
  ): Promise<{ child: ChildProcess; output: () => string; apiPort: number; dbPort: number }> {
    const [apiPort, dbPort] = [await freePort(), await freePort()];
    const { child, output } = spawnLocal({ PORT: String(apiPort), DYNAMODB_PORT: String(dbPort), ...env });
    await waitFor(() => (output().includes('API listening on') ? true : undefined), 60000).catch(() => {
      throw new Error(`npm start did not come up:\n${output()}`);
    });
    return { child, output, apiPort, dbPort };
  }

  it('serves with the printed key and leaves no java process after Ctrl-C', async () => {
    const { child, output, apiPort, dbPort } = await start();
    expect(output()).toContain(`API listening on http://127.0.0.1:${apiPort}`);
    // The voice platform's way in, where `npm run smoke -- --local` and a developer find it.
    expect(output()).toMatch(
      new RegExp(
        String.raw`Ingest queue: http://127\.0\.0\.1:\d+/\d+/ingest ` +
          String.raw`\(the voice platform's way in; refused calls: http://127\.0\.0\.1:\d+/\d+/ingest-dlq\)`,
      ),
    );
    const key = /Write key:\s+(sk_test_\S+)/.exec(output())?.[1];
    const me = await call(`http://127.0.0.1:${apiPort}`, 'GET', '/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.json.object).toBe('key_profile');
    expect(dynamoJavaPids(dbPort)).toHaveLength(1);

    // The first start seeds demo data through the domain code: the lists are not empty.
    expect(output()).toMatch(/Demo data:\s+8 calls, 5 jobs \(2 pending, 2 approved, 1 declined\), 16 events/);
    for (const path of ['/v1/calls', '/v1/jobs', '/v1/events']) {
      const list = await call(`http://127.0.0.1:${apiPort}`, 'GET', `${path}?limit=100`, { key });
      expect(list.status).toBe(200);
      expect((list.json.data as unknown[]).length).toBeGreaterThan(0);
    }
    const jobs = await call(`http://127.0.0.1:${apiPort}`, 'GET', '/v1/jobs?limit=100', { key });
    expect(new Set((jobs.json.data as { status: string }[]).map((j) => j.status))).toEqual(
      new Set(['pending', 'approved', 'declined']),
    );
    const calls = await call(`http://127.0.0.1:${apiPort}`, 'GET', '/v1/calls?limit=1', { key });
    const callId = (calls.json.data as { id: string }[])[0]?.id as string;
    const transcript = await call(`http://127.0.0.1:${apiPort}`, 'GET', `/v1/calls/${callId}/transcript`, { key });
    expect((transcript.json.turns as unknown[]).length).toBeGreaterThan(2);
    expect((await call(`http://127.0.0.1:${apiPort}`, 'GET', `/v1/calls/${callId}/summary`, { key })).status).toBe(200);

    // Request lines no HTTP client sends, without a key: each is answered, and the process lives on.
    for (const target of ['//[', 'http://a:99999/v1/me', 'http://a:99999/']) {
      const answer = await rawRequest(apiPort, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect([target, answer.split('\r\n')[0]]).toEqual([
        target,
        target === '//[' ? 'HTTP/1.1 404 Not Found' : 'HTTP/1.1 400 Bad Request',
      ]);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(child.exitCode).toBeNull();
    expect((await call(`http://127.0.0.1:${apiPort}`, 'GET', '/v1/me', { key })).status).toBe(200);

    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    await waitFor(() => (dynamoJavaPids(dbPort).length === 0 ? true : undefined), 10000);
  }, 90000);

  it('prints the demo shop and how to get a key on a restart with DYNAMODB_DATA_DIR (no second seed)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-data-'));
    try {
      const env = { DYNAMODB_DATA_DIR: dataDir, SECRETS_KEY_FILE: join(dataDir, 'secrets.key') };
      const first = await start(env);
      const shopId = /Demo shop:\s+(shop_\w+)/.exec(first.output())?.[1];
      expect(shopId).toBeDefined();
      first.child.kill('SIGINT');
      await once(first.child, 'exit');
      await waitFor(() => (dynamoJavaPids(first.dbPort).length === 0 ? true : undefined), 10000);

      const second = await start(env);
      expect(second.output()).toContain(
        `Demo shop:     ${shopId} (Demo Plumbing Co; the table already had data, nothing seeded)`,
      );
      expect(second.output()).toContain(
        `Get a key:     npm run cli -- key create --shop ${shopId} --scopes all --write`,
      );
      expect(second.output()).not.toContain('Write key:');
      expect(second.output()).not.toContain('Demo data:');
      second.child.kill('SIGINT');
      await once(second.child, 'exit');
      await waitFor(() => (dynamoJavaPids(second.dbPort).length === 0 ? true : undefined), 10000);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 150000);

  it('leaves no java process even when the app is killed with SIGKILL', async () => {
    const { child, dbPort } = await start();
    expect(dynamoJavaPids(dbPort)).toHaveLength(1);
    process.kill(child.pid as number, 'SIGKILL');
    await once(child, 'exit');
    await waitFor(() => (dynamoJavaPids(dbPort).length === 0 ? true : undefined), 10000);
  }, 90000);

  it('honours DELIVERY_TIMEOUT_MS from the environment: a receiver that never answers fails at 250 ms', async () => {
    // On a table of the run's DynamoDB Local: what is tested is the variable, not a launch.
    const { child, output, apiPort } = await start({
      DELIVERY_TIMEOUT_MS: '250',
      DYNAMODB_ENDPOINT: testEndpoint(),
      TABLE_NAME: uniqueTableName(),
    });
    const base = `http://127.0.0.1:${apiPort}`;
    const key = /Write key:\s+(sk_test_\S+)/.exec(output())?.[1];
    let secret = '';
    const hanging = await startReceiver(
      () => [secret],
      () => undefined,
    ); // verifies, then never answers
    const endpoint = await call(base, 'POST', '/v1/webhook-endpoints', {
      key,
      body: { url: hanging.url, events: ['call.completed'] },
    });
    expect(endpoint.status).toBe(201);
    secret = endpoint.json.secret as string;
    const test = await call(base, 'POST', `/v1/webhook-endpoints/${endpoint.json.id as string}/test`, { key });
    expect(test.status).toBe(202);
    const eventId = test.json.id as string;

    // Polled (5 per second, under the per-key rate limit) until the first attempt is recorded.
    let lastError: unknown = null;
    const deadline = Date.now() + 15000;
    while (lastError === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      const event = await call(base, 'GET', `/v1/events/${eventId}`, { key });
      lastError = (event.json.deliveries as { last_error: string | null }[] | undefined)?.[0]?.last_error ?? null;
    }
    expect(lastError).toBe('timeout after 250 ms');
    expect(hanging.received.length).toBeGreaterThanOrEqual(1);
    child.kill('SIGINT');
    await once(child, 'exit');
  }, 90000);

  it.each([
    ['DELIVERY_TIMEOUT_MS', 'abc'],
    ['SQS_PORT', '70000'],
    ['DELIVERY_TIMEOUT_MS', '0'],
    ['TIME_SCALE', '2'],
    ['WEBHOOK_ALLOW_INSECURE_LOCAL', 'yes'],
    ['POWERTOOLS_LOG_LEVEL', 'LOUD'],
  ])(
    'refuses %s=%s before starting anything: exit code 2 and a message naming it',
    async (name, value) => {
      const { child, output } = spawnLocal({ [name]: value, PORT: '0', DYNAMODB_PORT: '0' });
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(2);
      expect(output()).toContain(name);
      expect(output()).toContain(`'${value}'`);
      expect(output()).not.toContain('API listening');
    },
    30000,
  );
});
