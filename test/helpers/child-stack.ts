/**
 * The real `npm start` entry (`node --import tsx bin/local.ts`) as a child process that a test or a
 * benchmark can crash (SIGKILL of the app), stop (Ctrl-C) and start again on the same table,
 * while it writes to that table directly (calls, shops, keys). The table is either the child's
 * own DynamoDB Local on a data directory, which each start launches and each crash takes down
 * (as `npm start` does), or a table of its own on a DynamoDB Local that outlives the app's
 * crashes, as a table in AWS outlives its Lambdas'. No jest dependency: the benchmarks use it too.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { simulatedCall } from '../../lib/cli/simulate';
import { freePort } from '../../lib/local/dynamodb-local';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall, type IngestResult } from '../../shared/domain/calls';
import { createShop, type Shop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { configFromEnv } from '../../shared/config';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';
import { uniqueTableName } from './table';

export interface ChildStackOptions {
  timeScale?: number;
  deliveryTimeoutMs?: number;
  /** More environment for bin/local.ts (wins over the harness's own settings). */
  env?: Record<string, string>;
  /** How long a start may take before it counts as failed (default 60 s: a JVM on a busy 2-core VM). */
  readyTimeoutMs?: number;
  /** Keep the temporary folder (data, key, outbox) after close(), e.g. to look at a failure. */
  keepDir?: boolean;
  /** Where ports come from (default: a free one); a test of this harness hands out a taken one. */
  pickPort?: () => Promise<number>;
  /**
   * A DynamoDB Local that is already running (e.g. the test run's): the app uses a new table on it
   * (DYNAMODB_ENDPOINT) and launches none of its own, so a crash or a stop leaves the table up.
   */
  dynamodbEndpoint?: string;
}

export interface ApiReply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

export interface Tenant {
  shop: Shop;
  key: string;
}

export interface ChildStack {
  /** The API of the current run (a restart picks a new port). */
  readonly url: string;
  readonly dynamodbEndpoint: string;
  readonly tableName: string;
  /** The temporary folder: `data/` (the child's own DynamoDB Local), `secrets.key`, `outbox/`. */
  readonly dir: string;
  /** Printed on the first start (the table was empty and seeded); a restart seeds nothing. */
  readonly writeKey: string;
  readonly shopId: string;
  readonly running: boolean;
  /** How many times bin/local.ts was started. */
  readonly starts: number;
  /** What the current (or last) run printed, stdout and stderr. */
  output(): string;
  /** The node process that runs bin/local.ts (the child itself: `npm start` runs no tsx parent process). */
  appPid(): number;
  /** A crash: SIGKILL of the app's node process; returns once it and its own DynamoDB Local are gone. */
  sigkill(): Promise<void>;
  /** Ctrl-C: SIGINT, then waits for the exit (returns its code) and for its own DynamoDB Local to be gone. */
  sigint(): Promise<number | null>;
  /** Starts bin/local.ts again on the same table and key file. */
  restart(): Promise<void>;
  /** The table adapters of this process pointed at the child's DynamoDB Local (sets DYNAMODB_ENDPOINT/TABLE_NAME). */
  tableDeps(): ApiDeps;
  /** A new shop with a write key (all scopes), written straight into the child's table. */
  newTenant(name?: string): Promise<Tenant>;
  /** Ingests one finished call without a job into the child's table: one `call.completed` event. */
  ingest(shop: Shop): Promise<IngestResult>;
  /** A request to the child's API; a 429 is retried after its Retry-After (the per-key rate limit). */
  api(method: string, path: string, opts?: { key?: string; body?: unknown }): Promise<ApiReply>;
  /** Kills whatever still runs (the whole process group), waits for DynamoDB Local to be gone, removes the folder. */
  close(): Promise<void>;
}

const live = new Set<ChildStack>();
const groups = new Set<number>();
let exitHookInstalled = false;

/** Closes every child stack still open (use in afterAll / finally). */
export async function closeChildStacks(): Promise<void> {
  await Promise.all([...live].map((s) => s.close()));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when the owner dies without close(): no child stack outlives it.
  process.on('exit', () => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** PIDs of java processes serving DynamoDB Local on this port. */
export function dynamoJavaPids(port: number): number[] {
  // Anchored on `java`, so the watchdog shell (whose arguments repeat the command) is not counted.
  const out = spawnSync('pgrep', ['-f', `^java .*DynamoDBLocal.jar .*-port ${port}$`], { encoding: 'utf8' });
  return out.stdout.split('\n').filter(Boolean).map(Number);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** For races: a timer that does not keep the process alive once the race is decided. */
const deadline = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

async function until(probe: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** Waits until no DynamoDB Local listens on `port`; after `graceMs` kills the leftovers (that port is ours). */
async function javaGone(port: number, graceMs = 15_000): Promise<void> {
  if (await until(() => dynamoJavaPids(port).length === 0, graceMs)) return;
  for (const pid of dynamoJavaPids(port)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  if (!(await until(() => dynamoJavaPids(port).length === 0, 5000)))
    throw new Error(`DynamoDB Local on port ${port} would not die`);
}

export async function startChildStack(options: ChildStackOptions = {}): Promise<ChildStack> {
  if (!existsSync(resolve('node_modules/tsx')) || !existsSync(resolve('bin/local.ts')))
    throw new Error('run from the repository root (node_modules/tsx and bin/local.ts)');
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), 'child-stack-'));
  const dataDir = join(dir, 'data');
  const external = options.dynamodbEndpoint;
  const tableName = external ? uniqueTableName() : 'shop-calls';
  const cursorSecret = randomBytes(32).toString('hex');
  const pickPort = options.pickPort ?? freePort;
  let dynamodbPort = external ? 0 : await pickPort();
  const dynamodbEndpoint = () => external ?? `http://127.0.0.1:${dynamodbPort}`;
  /** After the app's exit: its own DynamoDB Local is gone too (one that outlives it is left alone). */
  const ownJavaGone = () => (external ? Promise.resolve() : javaGone(dynamodbPort));
  let apiPort = 0;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);
  let out = '';
  let url = '';
  let writeKey = '';
  let shopId = '';
  let starts = 0;
  let app = 0;

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  /**
   * Starts bin/local.ts once more. A port taken between `pickPort()` and the child's bind (by another stack, or
   * as an outgoing connection's ephemeral port) is no failed start: it starts again on new ports.
   */
  const launch = async () => {
    for (let tries = 1; ; tries++) {
      const started = await spawnApp();
      if (started === 'ready') return;
      if (tries === 3) throw new Error(`bin/local.ts found its ports taken ${tries} times:\n${out}`);
      if (started === 'dynamodb port taken') dynamodbPort = await pickPort();
    }
  };

  const spawnApp = async (): Promise<'ready' | 'api port taken' | 'dynamodb port taken'> => {
    apiPort = await pickPort();
    out = '';
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      DYNAMODB_PORT: String(dynamodbPort),
      // A free one: tests and benchmarks run several stacks at once.
      SQS_PORT: '0',
      DYNAMODB_ENDPOINT: external ?? '',
      DYNAMODB_DATA_DIR: external ? '' : dataDir,
      TABLE_NAME: tableName,
      SECRETS_KEY_FILE: join(dir, 'secrets.key'),
      OUTBOX_DIR: join(dir, 'outbox'),
      // Never the checkout's .local/stack.json: a developer's own `npm start` keeps its file.
      LOCAL_STACK_FILE: join(dir, 'stack.json'),
      CURSOR_SECRET: cursorSecret,
      WEBHOOK_ALLOW_INSECURE_LOCAL: 'true',
      TIME_SCALE: String(options.timeScale ?? 1),
      DELIVERY_TIMEOUT_MS: String(options.deliveryTimeoutMs ?? 10_000),
      POWERTOOLS_LOG_LEVEL: 'WARN',
      // Far above what a test sends (test/helpers/stack.ts says why).
      RATE_LIMIT_TEST_PER_SECOND: '100000',
      RATE_LIMIT_LIVE_PER_SECOND: '100000',
      RATE_LIMIT_AUTH_FAILURES_PER_SECOND: '100000',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...options.env,
    };
    // As `npm start` runs it, in a process group of its own (the app, the DynamoDB Local watchdog and JVM).
    const c = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child = c;
    if (c.pid) groups.add(c.pid);
    exited = new Promise((resolveExit) =>
      c.once('exit', (code) => {
        if (c.pid) groups.delete(c.pid);
        resolveExit(code);
      }),
    );
    const append = (d: Buffer) => {
      out += d.toString();
      if (out.length > 4_000_000) out = out.slice(-2_000_000);
    };
    c.stdout?.on('data', append);
    c.stderr?.on('data', append);
    const ready = await until(() => out.includes('API listening on') || !running(), options.readyTimeoutMs ?? 60_000);
    if (!ready || !running()) {
      if (running() && c.pid) process.kill(-c.pid, 'SIGKILL');
      await exited;
      await ownJavaGone();
      if (new RegExp(`EADDRINUSE[^\\n]*:${apiPort}\\b`).test(out)) return 'api port taken';
      if (/is the port in use\?/.test(out)) return 'dynamodb port taken';
      throw new Error(`bin/local.ts did not come up (start ${starts + 1}):\n${out}`);
    }
    starts++;
    url = /API listening on (http:\/\/\S+)/.exec(out)?.[1] ?? `http://127.0.0.1:${apiPort}`;
    app = c.pid as number;
    const seededKey = /Write key:\s+(sk_test_\S+)/.exec(out)?.[1];
    const printedShop = /Demo shop:\s+(shop_\S+)/.exec(out)?.[1];
    if (starts === 1) {
      if (!seededKey || !printedShop) throw new Error(`the first start printed no demo shop and key:\n${out}`);
      writeKey = seededKey;
      shopId = printedShop;
    } else if (seededKey) {
      throw new Error(`start ${starts} seeded a fresh table: ${tableName} at ${dynamodbEndpoint()} did not survive`);
    }
    return 'ready';
  };

  let tableDepsOf: { endpoint: string; deps: ApiDeps } | undefined;
  const stack: ChildStack = {
    get url() {
      return url;
    },
    get dynamodbEndpoint() {
      return dynamodbEndpoint();
    },
    tableName,
    dir,
    get writeKey() {
      return writeKey;
    },
    get shopId() {
      return shopId;
    },
    get running() {
      return running();
    },
    get starts() {
      return starts;
    },
    output: () => out,
    appPid: () => app,
    sigkill: async () => {
      if (!running()) throw new Error('the child stack is not running');
      process.kill(app, 'SIGKILL');
      const gone = await Promise.race([exited.then(() => true), deadline(10_000).then(() => false)]);
      if (!gone && child?.pid) process.kill(-child.pid, 'SIGKILL');
      await exited;
      // The watchdog stops the JVM when the app's pipe closes; a restart on the same data dir must wait for that.
      await ownJavaGone();
    },
    sigint: async () => {
      if (!running()) throw new Error('the child stack is not running');
      child?.kill('SIGINT');
      const code = await Promise.race([exited, deadline(30_000).then(() => 'timeout' as const)]);
      if (code === 'timeout') {
        if (child?.pid) process.kill(-child.pid, 'SIGKILL');
        await exited;
        await ownJavaGone();
        throw new Error(`Ctrl-C did not stop the stack within 30 s:\n${out}`);
      }
      await ownJavaGone();
      return code;
    },
    restart: async () => {
      if (running()) throw new Error('stop the child stack (sigkill or sigint) before restarting it');
      await launch();
    },
    tableDeps: () => {
      const endpoint = dynamodbEndpoint();
      if (tableDepsOf?.endpoint !== endpoint) {
        tableDepsOf = {
          endpoint,
          deps: apiDeps(
            configFromEnv({
              ...process.env,
              DYNAMODB_ENDPOINT: endpoint,
              TABLE_NAME: tableName,
              SECRETS_KEY_FILE: join(dir, 'secrets.key'),
              AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
            }),
          ),
        };
      }
      return tableDepsOf.deps;
    },
    newTenant: async (name = 'Child Stack Shop') => {
      const deps = stack.tableDeps();
      const shop = await createShop(deps, { name, owner_email: 'owner@child-stack.test' });
      const { key } = await issueKey(deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: true, mode: 'test' });
      return { shop, key };
    },
    ingest: (shop) =>
      ingestCall(stack.tableDeps(), simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() })),
    api: async (method, path, opts = {}) => {
      const headers: Record<string, string> = {};
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(`${url}${path}`, {
          method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        });
        const text = await res.text();
        if (res.status === 429 && attempt < 10) {
          await sleep(Math.min(5, Number(res.headers.get('retry-after')) || 1) * 1000);
          continue;
        }
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // not JSON: leave it to the caller's status check
        }
        return { status: res.status, headers: res.headers, text, json };
      }
    },
    close: async () => {
      if (!live.delete(stack)) return;
      if (running() && child?.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      await exited;
      await ownJavaGone();
      if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(stack);
  try {
    await launch();
  } catch (err) {
    await stack.close();
    throw err;
  }
  return stack;
}
