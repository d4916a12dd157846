import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Where a running `npm start` is: written once it listens, removed when it stops cleanly, so
 * `npm run listen`, `receiver`, `cli` and `smoke` find it on whatever ports it was given. It holds
 * no key (keys are shown once and stored only as hashes). `LOCAL_STACK_FILE` moves it (the tests
 * do, so they never touch the file of a stack a developer is running).
 */
export const DEFAULT_STACK_FILE = join('.local', 'stack.json');
export const DEFAULT_LISTEN_PORT = 4242;
export const DEFAULT_RECEIVER_PORT = 4000;
/** Where the operator tools look when nothing is recorded: `npm start`'s defaults. */
export const LOCAL_PORTS = { api: 3000, dynamodb: 8000, sqs: 9324 } as const;
export const LOCAL_DEFAULTS = {
  host: '127.0.0.1',
  endpoint: `http://127.0.0.1:${LOCAL_PORTS.dynamodb}`,
  table: 'shop-calls',
  region: 'us-east-1',
  secretsKeyFile: join('.local', 'secrets.key'),
  /** The voice platform's queue on the local SQS emulator (lib/local/sqs.ts names it). */
  ingestQueue: 'ingest',
} as const;

export interface StackFile {
  /** The `npm start` process: a file whose process is gone is from a stack that did not stop cleanly. */
  pid: number;
  started_at: string;
  api_url: string;
  portal_url: string;
  table: { endpoint: string; name: string; region: string };
  /** Absolute: the local stand-in for KMS that encrypts webhook secrets (`npm run listen` reads them). */
  secrets_key_file: string;
  /** The demo shop, when this start seeded it or found it. */
  demo_shop_id: string | null;
  listen: { port: number };
  receiver: { port: number };
  /** The voice platform's way in (SQS on the local emulator): `npm run smoke -- --local` sends its call there. */
  ingest_queue: { url: string; dlq_url: string };
}

export type StackLookup =
  | { state: 'running'; path: string; stack: StackFile }
  | { state: 'stale'; path: string; stack: StackFile }
  | { state: 'absent'; path: string }
  | { state: 'unreadable'; path: string; error: string };

export function stackFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.LOCAL_STACK_FILE || DEFAULT_STACK_FILE);
}

/** Written whole or not at all (a temporary file renamed into place), so a reader never sees half of it. */
export function writeStackFile(path: string, stack: StackFile): void {
  mkdirSync(dirname(path), { recursive: true });
  const scratch = `${path}.${process.pid}.tmp`;
  writeFileSync(scratch, `${JSON.stringify(stack, null, 2)}\n`);
  renameSync(scratch, path);
}

/** Removes the file if it is this process's: a second `npm start` that wrote it since keeps it. */
export function removeStackFile(path: string, pid = process.pid): void {
  const found = readAt(path);
  if (found.state === 'running' || found.state === 'stale') {
    if (found.stack.pid === pid) rmSync(path, { force: true });
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

export function findStack(
  env: NodeJS.ProcessEnv = process.env,
  alive: (pid: number) => boolean = isAlive,
): StackLookup {
  return readAt(stackFilePath(env), alive);
}

function readAt(path: string, alive: (pid: number) => boolean = isAlive): StackLookup {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent', path };
    return { state: 'unreadable', path, error: (err as Error).message };
  }
  try {
    const stack = JSON.parse(text) as StackFile;
    if (!Number.isInteger(stack.pid) || typeof stack.api_url !== 'string' || typeof stack.table?.endpoint !== 'string')
      throw new Error('not a stack file');
    return { state: alive(stack.pid) ? 'running' : 'stale', path, stack };
  } catch (err) {
    return { state: 'unreadable', path, error: (err as Error).message };
  }
}

/**
 * The recorded stack, also when its process is gone: its ports then answer nothing, and the
 * failure names the file (notRunningHint) instead of trying `npm start`'s default ports, where
 * something else may run.
 */
export const recordedStack = (lookup: StackLookup): StackFile | undefined =>
  lookup.state === 'running' || lookup.state === 'stale' ? lookup.stack : undefined;

/**
 * The table settings of the local stack for a tool: each variable set in the environment wins,
 * then the stack file, then `npm start`'s defaults. A DYNAMODB_ENDPOINT set by hand names
 * another DynamoDB: the file, which describes its own, is not used at all then.
 */
export function localTableEnv(
  env: NodeJS.ProcessEnv,
  lookup: StackLookup,
): { DYNAMODB_ENDPOINT: string; TABLE_NAME: string; AWS_REGION: string; SECRETS_KEY_FILE: string } {
  const stack = env.DYNAMODB_ENDPOINT ? undefined : recordedStack(lookup);
  return {
    DYNAMODB_ENDPOINT: env.DYNAMODB_ENDPOINT || stack?.table.endpoint || LOCAL_DEFAULTS.endpoint,
    TABLE_NAME: env.TABLE_NAME || stack?.table.name || LOCAL_DEFAULTS.table,
    AWS_REGION: env.AWS_REGION || stack?.table.region || LOCAL_DEFAULTS.region,
    SECRETS_KEY_FILE: env.SECRETS_KEY_FILE || stack?.secrets_key_file || LOCAL_DEFAULTS.secretsKeyFile,
  };
}

/** Said after "nothing answers at …": what the stack file tells about it. */
export function notRunningHint(lookup: StackLookup): string {
  const where = lookup.path;
  switch (lookup.state) {
    case 'stale':
      return `is \`npm start\` running? (${where} was written by one that has stopped, pid ${lookup.stack.pid})`;
    case 'unreadable':
      return `is \`npm start\` running? (${where} could not be read: ${lookup.error})`;
    case 'absent':
      return `is \`npm start\` running? (it records where it runs in ${where}; there is none)`;
    default:
      return `is \`npm start\` running? (${where} names pid ${lookup.stack.pid}, which does not answer there)`;
  }
}
