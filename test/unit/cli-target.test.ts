import { explainFailure, resolveTarget } from '../../lib/cli/target';

const outputs = JSON.stringify({ Prod: { TableName: 'Prod-DataTable-1', Region: 'eu-west-1', SecretsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/k' }, Old: { TableName: 'Old-Table' } });
const files = (name: string) => (name === 'cdk-outputs.json' ? outputs : null);

describe('operator CLI target', () => {
  it('talks to the local stack without --stack, says so, and ignores an empty DYNAMODB_ENDPOINT', () => {
    const target = resolveTarget(['shop', 'list'], { DYNAMODB_ENDPOINT: '', AWS_REGION: 'eu-west-1' }, files);
    expect(target).toMatchObject({ argv: ['shop', 'list'], local: true, env: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', TABLE_NAME: 'shop-calls' } });
    expect(target.banner).toMatch(/^Local stack: table shop-calls on DynamoDB Local at http:\/\/127\.0\.0\.1:8000/);
    expect(resolveTarget(['shop', 'list'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8123' }, files).env.DYNAMODB_ENDPOINT).toBe('http://127.0.0.1:8123');
  });

  it('takes the table, Region and key of a deployed stack from its outputs, over whatever the shell has set', () => {
    const target = resolveTarget(['--stack', 'Prod', 'key', 'create', '--shop', 'shop_1'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', AWS_REGION: 'us-east-1' }, files);
    expect(target).toMatchObject({
      argv: ['key', 'create', '--shop', 'shop_1'],
      local: false,
      env: { DYNAMODB_ENDPOINT: '', TABLE_NAME: 'Prod-DataTable-1', AWS_REGION: 'eu-west-1', SECRETS_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:key/k' },
      banner: 'Stack Prod: table Prod-DataTable-1 in eu-west-1.',
    });
  });

  it('knows where the API answers, for the links it prints: the local stack\'s PORT, or the stack\'s ApiUrl output', () => {
    expect(resolveTarget(['portal', 'open'], {}, files).apiUrl).toBe('http://127.0.0.1:3000');
    expect(resolveTarget(['portal', 'open'], { PORT: '3300' }, files).apiUrl).toBe('http://127.0.0.1:3300');
    const withUrl = () => JSON.stringify({ P: { TableName: 'T', Region: 'eu-west-1', ApiUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/' } });
    expect(resolveTarget(['--stack', 'P', 'portal', 'open'], {}, withUrl).apiUrl).toBe('https://abc.execute-api.eu-west-1.amazonaws.com');
    expect(resolveTarget(['--stack', 'Prod', 'portal', 'open'], {}, files).apiUrl).toBeUndefined();
  });

  it('leaves a command\'s own --stack-like flags alone, and reads another outputs file when told', () => {
    expect(resolveTarget(['shop', 'list', '--stack', 'Prod'], {}, files).argv).toEqual(['shop', 'list', '--stack', 'Prod']);
    const other = (name: string) => (name === 'staging.json' ? JSON.stringify({ S: { TableName: 'T', Region: 'us-west-2' } }) : null);
    expect(resolveTarget(['--outputs', 'staging.json', '--stack', 'S', 'shop', 'list'], {}, other).env).toMatchObject({ TABLE_NAME: 'T', AWS_REGION: 'us-west-2' });
  });

  it('refuses a missing outputs file, an unknown stack, outputs without a Region, and a flag without a value', () => {
    expect(() => resolveTarget(['--stack', 'Prod', 'shop', 'list'], {}, () => null)).toThrow(/cdk-outputs.json not found: deploy with `npx cdk deploy --outputs-file cdk-outputs.json`/);
    expect(() => resolveTarget(['--stack', 'Nope', 'shop', 'list'], {}, files)).toThrow(/no TableName and Region for stack Nope/);
    expect(() => resolveTarget(['--stack', 'Old', 'shop', 'list'], {}, files)).toThrow(/no TableName and Region for stack Old/);
    expect(() => resolveTarget(['--stack'], {}, files)).toThrow(/--stack needs a value/);
  });

  it('names a local stack that is not running instead of ECONNREFUSED', () => {
    const refused = Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' })], ''), { code: 'ECONNREFUSED' });
    expect(explainFailure(refused, { local: true, endpoint: 'http://127.0.0.1:8000' })).toBe('nothing answers at http://127.0.0.1:8000: is `npm start` running?');
    expect(explainFailure(new Error('AccessDeniedException: no'), { local: false })).toBe('AccessDeniedException: no');
    expect(explainFailure(refused, { local: false })).toBe('ECONNREFUSED');
  });
});
