import { explainFailure, resolveTarget } from '../../lib/cli/target';
import type { StackFile, StackLookup } from '../../lib/local/stack-file';

const outputs = JSON.stringify({
  Prod: {
    TableName: 'Prod-DataTable-1',
    Region: 'eu-west-1',
    SecretsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/k',
  },
  Old: { TableName: 'Old-Table' },
});
const files = (name: string) => (name === 'cdk-outputs.json' ? outputs : null);
const none = (): StackLookup => ({ state: 'absent', path: '/w/.local/stack.json' });
const recorded: StackFile = {
  pid: 4242,
  started_at: '2026-01-01T00:00:00.000Z',
  api_url: 'http://127.0.0.1:3300',
  portal_url: 'http://127.0.0.1:3300/portal',
  table: { endpoint: 'http://127.0.0.1:8300', name: 'shop-calls', region: 'us-east-1' },
  secrets_key_file: '/w/.local/secrets.key',
  demo_shop_id: 'shop_1',
  listen: { port: 4242 },
  receiver: { port: 4000 },
  ingest_queue: { url: 'http://127.0.0.1:9324/queue/ingest', dlq_url: 'http://127.0.0.1:9324/queue/ingest-dlq' },
};

describe('operator CLI target', () => {
  it('talks to the local stack without --stack, says so, and ignores an empty DYNAMODB_ENDPOINT', () => {
    const target = resolveTarget(['shop', 'list'], { DYNAMODB_ENDPOINT: '', AWS_REGION: 'eu-west-1' }, files, none);
    expect(target).toMatchObject({
      argv: ['shop', 'list'],
      local: true,
      env: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', TABLE_NAME: 'shop-calls' },
    });
    expect(target.banner).toMatch(/^Local stack: table shop-calls on DynamoDB Local at http:\/\/127\.0\.0\.1:8000/);
    expect(
      resolveTarget(['shop', 'list'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8123' }, files, none).env
        .DYNAMODB_ENDPOINT,
    ).toBe('http://127.0.0.1:8123');
  });

  it('finds the running npm start in its stack file; a variable set by hand wins, and DYNAMODB_ENDPOINT sets the file aside', () => {
    const running = (): StackLookup => ({ state: 'running', path: '/w/.local/stack.json', stack: recorded });
    expect(resolveTarget(['shop', 'list'], {}, files, running)).toMatchObject({
      local: true,
      endpoint: 'http://127.0.0.1:8300',
      env: {
        DYNAMODB_ENDPOINT: 'http://127.0.0.1:8300',
        TABLE_NAME: 'shop-calls',
        AWS_REGION: 'us-east-1',
        SECRETS_KEY_FILE: '/w/.local/secrets.key',
      },
    });
    expect(resolveTarget(['shop', 'list'], { TABLE_NAME: 'mine' }, files, running).env).toMatchObject({
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8300',
      TABLE_NAME: 'mine',
    });
    expect(
      resolveTarget(['shop', 'list'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9000' }, files, running).env,
    ).toMatchObject({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:9000', SECRETS_KEY_FILE: '.local/secrets.key' });
    // A deployed stack never reads it.
    expect(resolveTarget(['--stack', 'Prod', 'shop', 'list'], {}, files, running).env.DYNAMODB_ENDPOINT).toBe('');
  });

  it('takes the table, Region and key of a deployed stack from its outputs, over whatever the shell has set', () => {
    const target = resolveTarget(
      ['--stack', 'Prod', 'key', 'create', '--shop', 'shop_1'],
      { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', AWS_REGION: 'us-east-1' },
      files,
      none,
    );
    expect(target).toMatchObject({
      argv: ['key', 'create', '--shop', 'shop_1'],
      local: false,
      env: {
        DYNAMODB_ENDPOINT: '',
        TABLE_NAME: 'Prod-DataTable-1',
        AWS_REGION: 'eu-west-1',
        SECRETS_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:key/k',
      },
      banner: 'Stack Prod: table Prod-DataTable-1 in eu-west-1.',
    });
  });

  it("knows where the API answers, for the links it prints: the local stack's PORT, or the stack's ApiUrl output", () => {
    expect(resolveTarget(['portal', 'open'], {}, files).apiUrl).toBe('http://127.0.0.1:3000');
    expect(resolveTarget(['portal', 'open'], { PORT: '3300' }, files).apiUrl).toBe('http://127.0.0.1:3300');
    const withUrl = () =>
      JSON.stringify({
        P: { TableName: 'T', Region: 'eu-west-1', ApiUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/' },
      });
    expect(resolveTarget(['--stack', 'P', 'portal', 'open'], {}, withUrl).apiUrl).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com',
    );
    expect(resolveTarget(['--stack', 'Prod', 'portal', 'open'], {}, files).apiUrl).toBeUndefined();
  });

  it("leaves a command's own --stack-like flags alone, and reads another outputs file when told", () => {
    expect(resolveTarget(['shop', 'list', '--stack', 'Prod'], {}, files, none).argv).toEqual([
      'shop',
      'list',
      '--stack',
      'Prod',
    ]);
    const other = (name: string) =>
      name === 'staging.json' ? JSON.stringify({ S: { TableName: 'T', Region: 'us-west-2' } }) : null;
    expect(resolveTarget(['--outputs', 'staging.json', '--stack', 'S', 'shop', 'list'], {}, other).env).toMatchObject({
      TABLE_NAME: 'T',
      AWS_REGION: 'us-west-2',
    });
  });

  it('refuses a missing outputs file, an unknown stack, outputs without a Region, and a flag without a value', () => {
    expect(() => resolveTarget(['--stack', 'Prod', 'shop', 'list'], {}, () => null)).toThrow(
      /cdk-outputs.json not found: deploy with `npx cdk deploy --outputs-file cdk-outputs.json`/,
    );
    expect(() => resolveTarget(['--stack', 'Nope', 'shop', 'list'], {}, files)).toThrow(
      /no TableName and Region for stack Nope/,
    );
    expect(() => resolveTarget(['--stack', 'Old', 'shop', 'list'], {}, files)).toThrow(
      /no TableName and Region for stack Old/,
    );
    expect(() => resolveTarget(['--stack'], {}, files)).toThrow(/--stack needs a value/);
  });

  it('names a local stack that is not running instead of ECONNREFUSED', () => {
    const refused = Object.assign(
      new AggregateError(
        [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' })],
        '',
      ),
      { code: 'ECONNREFUSED' },
    );
    expect(explainFailure(refused, { local: true, endpoint: 'http://127.0.0.1:8000' })).toBe(
      'nothing answers at http://127.0.0.1:8000: is `npm start` running?',
    );
    expect(
      explainFailure(refused, {
        local: true,
        endpoint: 'http://127.0.0.1:8300',
        stack: { state: 'stale', path: '/w/.local/stack.json', stack: recorded },
      }),
    ).toBe(
      'nothing answers at http://127.0.0.1:8300: is `npm start` running? (/w/.local/stack.json was written by one that has stopped, pid 4242)',
    );
    expect(explainFailure(refused, { local: true, endpoint: 'http://127.0.0.1:8000', stack: none() })).toMatch(
      /is `npm start` running\? \(it records where it runs in \/w\/\.local\/stack\.json; there is none\)/,
    );
    expect(explainFailure(new Error('AccessDeniedException: no'), { local: false })).toBe('AccessDeniedException: no');
    expect(explainFailure(refused, { local: false })).toBe('ECONNREFUSED');
  });
});
