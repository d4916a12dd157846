import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findStack,
  localTableEnv,
  removeStackFile,
  stackFilePath,
  writeStackFile,
  type StackFile,
} from '../../lib/local/stack-file';

const stack = (pid: number): StackFile => ({
  pid,
  started_at: '2026-01-01T00:00:00.000Z',
  api_url: 'http://127.0.0.1:3300',
  portal_url: 'http://127.0.0.1:3300/portal',
  table: { endpoint: 'http://127.0.0.1:8300', name: 'shop-calls', region: 'us-east-1' },
  secrets_key_file: '/w/.local/secrets.key',
  demo_shop_id: null,
  listen: { port: 4242 },
  receiver: { port: 4000 },
  ingest_queue: { url: 'http://127.0.0.1:9324/queue/ingest', dlq_url: 'http://127.0.0.1:9324/queue/ingest-dlq' },
});

describe('the local stack file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stack-file-unit-'));
  const path = join(dir, 'sub', 'stack.json');
  const env = { LOCAL_STACK_FILE: path };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lives at .local/stack.json unless LOCAL_STACK_FILE moves it', () => {
    expect(stackFilePath({})).toBe(join(process.cwd(), '.local', 'stack.json'));
    expect(stackFilePath(env)).toBe(path);
  });

  it('is running while its pid lives, stale after; absent or unreadable otherwise', () => {
    expect(findStack(env).state).toBe('absent');
    writeStackFile(path, stack(process.pid));
    expect(findStack(env)).toMatchObject({ state: 'running', stack: { pid: process.pid } });
    expect(findStack(env, () => false)).toMatchObject({ state: 'stale' });
    rmSync(path);
    writeStackFile(path, { nope: true } as unknown as StackFile);
    expect(findStack(env)).toMatchObject({ state: 'unreadable', error: 'not a stack file' });
  });

  it('is removed only by the process that wrote it', () => {
    writeStackFile(path, stack(process.pid + 1_000_000));
    removeStackFile(path); // another stack's: kept
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid + 1_000_000 });
    writeStackFile(path, stack(process.pid));
    removeStackFile(path);
    expect(findStack(env).state).toBe('absent');
  });

  it('gives the tools its table, each setting overridden by the environment; DYNAMODB_ENDPOINT sets the whole file aside', () => {
    const running = { state: 'running' as const, path, stack: stack(1) };
    expect(localTableEnv({}, running)).toEqual({
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8300',
      TABLE_NAME: 'shop-calls',
      AWS_REGION: 'us-east-1',
      SECRETS_KEY_FILE: '/w/.local/secrets.key',
    });
    expect(localTableEnv({ AWS_REGION: 'eu-west-1' }, running).AWS_REGION).toBe('eu-west-1');
    expect(localTableEnv({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:9000' }, running)).toEqual({
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9000',
      TABLE_NAME: 'shop-calls',
      AWS_REGION: 'us-east-1',
      SECRETS_KEY_FILE: join('.local', 'secrets.key'),
    });
    expect(localTableEnv({}, { state: 'absent', path }).DYNAMODB_ENDPOINT).toBe('http://127.0.0.1:8000');
  });
});
