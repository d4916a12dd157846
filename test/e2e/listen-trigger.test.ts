import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../lib/local/dynamodb-local';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;

/**
 * `npm run listen` + `npm run cli -- trigger <type>`: the real entry points, as child processes, on a stack
 * in this process.
 */
describe('a first verified webhook in two commands', () => {
  let stack: Stack;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    stack = await startTestStack({ allowInsecureWebhookTargets: true });
  });
  afterAll(async () => {
    // Whatever a failed assertion left running: tsx and the node process it runs (one group each).
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    await stack.stop();
  });

  const env = () => ({
    ...process.env,
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    TABLE_NAME: stack.tableName,
    POWERTOOLS_LOG_LEVEL: 'WARN',
  });

  /**
   * As `npm run listen` runs it (`node --import tsx`): a tsx parent would relay Ctrl-C and kill the
   * listener when it is slow to report the signal, before it disables its endpoint.
   */
  function listen(args: string[]): { child: ChildProcess; output: () => string } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/listen.ts', ...args], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    return { child, output: () => output };
  }

  async function until(probe: () => boolean, what: string, output: () => string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const cli = (...args: string[]) =>
    spawnSync('node_modules/.bin/tsx', ['bin/cli.ts', ...args], { env: env(), encoding: 'utf8' });

  it('listen registers an endpoint; a triggered call.completed arrives verified; a forged one refused', async () => {
    const first = listen(['--port', '0']);
    await until(() => first.output().includes('Trigger one:'), 'the listener', first.output);
    const url = /Listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks) for shop (shop_\w+)/.exec(first.output());
    expect(url?.[2]).toBe(stack.demo.shop.id);
    const endpoints = await stack.deps.endpoints.list(stack.demo.shop.id);
    expect(endpoints).toEqual([expect.objectContaining({ url: url?.[1], events: ['*'], enabled: true })]);

    const triggered = cli('trigger', 'call.completed');
    expect(triggered.stderr).toMatch(
      new RegExp(
        String.raw`^Local stack: table \S+ on DynamoDB Local at http://127\.0\.0\.1:\d+ \(npm start\)\. ` +
          String.raw`For a deployed stack: --stack NAME\.\n$`,
      ),
    );
    expect(triggered.status).toBe(0);
    const eventId = /Triggered call.completed (evt_\w+) for shop/.exec(triggered.stdout)?.[1];
    expect(eventId).toBeDefined();
    await until(
      () => first.output().includes(`✓ verified call.completed ${eventId}`),
      'the verified event',
      first.output,
    );
    expect(first.output()).toMatch(/call_\w+ from .+ \+1\d+, \d+ s, outcome message_taken/);

    // Signed with another secret: refused with 400 and shown as rejected.
    const forged = new Webhook(`whsec_${Buffer.from('not-the-endpoint-secret-0123456789').toString('base64')}`);
    const body = JSON.stringify({
      id: 'evt_forged',
      type: 'call.completed',
      timestamp: new Date().toISOString(),
      data: {},
    });
    const at = new Date();
    const reply = await fetch(url?.[1] as string, {
      method: 'POST',
      body,
      headers: {
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': forged.sign('msg_forged', at, body),
      },
    });
    expect(reply.status).toBe(400);
    // The answer says why, so the endpoint's attempt log explains the refusal.
    expect(await reply.text()).toMatch(/none of the 1 v1 signature\(s\) matches/);
    await until(() => first.output().includes('✗ rejected msg_forged'), 'the rejection', first.output);
    expect(first.output()).not.toContain('evt_forged');

    first.child.kill('SIGINT');
    const [code] = (await once(first.child, 'exit')) as [number | null];
    expect(code).toBe(0);
    // Nobody listens now: the endpoint is disabled, so nothing is retried against the closed port.
    expect(first.output()).toMatch(/Disabled webhook endpoint we_\w+/);
    expect(await stack.deps.endpoints.list(stack.demo.shop.id)).toEqual([
      expect.objectContaining({ url: url?.[1], enabled: false, disabled_reason: 'manual' }),
    ]);
  }, 90_000);

  it('a second listen on the same port reuses the endpoint and its secret', async () => {
    const port = String(await freePort());
    const one = listen(['--port', port]);
    await until(() => one.output().includes('Trigger one:'), 'the listener', one.output);
    one.child.kill('SIGINT');
    await once(one.child, 'exit');
    const before = await stack.deps.endpoints.list(stack.demo.shop.id);

    const two = listen(['--port', port, '--json']);
    await until(() => two.output().includes('Trigger one:'), 'the second listener', two.output);
    expect(two.output()).toMatch(/Reusing webhook endpoint we_\w+/);
    expect(await stack.deps.endpoints.list(stack.demo.shop.id)).toHaveLength(before.length);
    // Disabled when the first one stopped, enabled again by this one.
    expect(before.find((e) => e.url.includes(`:${port}/`))?.enabled).toBe(false);
    expect(
      (await stack.deps.endpoints.list(stack.demo.shop.id)).find((e) => e.url.includes(`:${port}/`))?.enabled,
    ).toBe(true);
    const triggered = cli('trigger', 'job.approved', '--json');
    expect(triggered.status).toBe(0);
    const { event_id } = JSON.parse(triggered.stdout) as { event_id: string };
    await until(() => two.output().includes(`✓ verified job.approved ${event_id}`), 'the approval', two.output);
    expect(two.output()).toContain('"status": "approved"');
    two.child.kill('SIGINT');
    await once(two.child, 'exit');
  }, 90_000);

  it.each([[['--help']], [['-h']]])(
    'listen %j prints its usage and exits 0; a bad option exits 2',
    async (args) => {
      const help = spawnSync('node_modules/.bin/tsx', ['bin/listen.ts', ...args], { env: env(), encoding: 'utf8' });
      expect(help.status).toBe(0);
      expect(help.stdout).toContain('Usage: npm run listen');
      const bad = spawnSync('node_modules/.bin/tsx', ['bin/listen.ts', '--prot', '1'], {
        env: env(),
        encoding: 'utf8',
      });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain("Unknown option '--prot'");
    },
    30_000,
  );

  it('npm run receiver -- --help prints its usage (no stack trace) and exits 0; a bad option exits 2', () => {
    const help = spawnSync('node_modules/.bin/tsx', ['bin/receiver.ts', '--help'], { env: env(), encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: WEBHOOK_SECRET=whsec_... npm run receiver');
    const bad = spawnSync('node_modules/.bin/tsx', ['bin/receiver.ts', '--sekret', 'x'], {
      env: env(),
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("Unknown option '--sekret'");
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('npm run receiver takes its secret from WEBHOOK_SECRET, never from the command line', async () => {
    const secret = `whsec_${Buffer.from('receiver-test-secret-0123456789ab').toString('base64')}`;
    const argv = spawnSync('node_modules/.bin/tsx', ['bin/receiver.ts', '--secret', secret], {
      env: { ...env(), WEBHOOK_SECRET: '' },
      encoding: 'utf8',
    });
    expect(argv.status).toBe(2);
    expect(argv.stderr).toContain(
      '--secret is not accepted: a secret on the command line is visible to every user in `ps`. ' +
        'Set WEBHOOK_SECRET instead.',
    );
    const unset = spawnSync('node_modules/.bin/tsx', ['bin/receiver.ts'], {
      env: { ...env(), WEBHOOK_SECRET: '' },
      encoding: 'utf8',
    });
    expect([unset.status, unset.stderr.split('\n')[0]]).toEqual([
      2,
      expect.stringContaining("Error: WEBHOOK_SECRET is not set: export the endpoint's signing secret (whsec_…) first"),
    ]);

    const child = spawn('node_modules/.bin/tsx', ['bin/receiver.ts', '--port', '0'], {
      env: { ...env(), WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await until(
      () => /Receiver listening on http:\/\/127\.0\.0\.1:[1-9]\d*\//.test(output),
      'the receiver',
      () => output,
    );
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)?.[1] as string;
    const post = (signer: Webhook, id: string) => {
      const body = JSON.stringify({
        id,
        type: 'call.completed',
        timestamp: new Date().toISOString(),
        data: { id: 'call_1' },
      });
      const at = new Date();
      return fetch(url, {
        method: 'POST',
        body,
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signer.sign(id, at, body),
        },
      });
    };
    expect((await post(new Webhook(secret), 'evt_signed')).status).toBe(204);
    expect(
      (
        await post(
          new Webhook(`whsec_${Buffer.from('another-secret-0123456789abcdef').toString('base64')}`),
          'evt_forged',
        )
      ).status,
    ).toBe(400);
    await until(
      () => output.includes('✓ call.completed evt_signed') && output.includes('✗ rejected'),
      'both lines',
      () => output,
    );
    child.kill('SIGINT');
    await once(child, 'exit');
  }, 60_000);
});
