import { AwsApi, DYNAMODB } from '../../shared/aws/aws-call';
import { configFromEnv } from '../../shared/config';
import { cancellationReasons, isConditionFailed } from '../../shared/store/client';
import { TableClient, type TableObserver } from '../../shared/store/table-api';
import { identityOf } from '../../shared/wiring/clients';
import { identity, noPause, startAwsWire, type AwsWire } from '../helpers/aws-wire';

describe('the table client (shared/store/table-api.ts)', () => {
  let wire: AwsWire;
  let table: TableClient;
  beforeAll(async () => {
    wire = await startAwsWire();
    table = new TableClient(new AwsApi(DYNAMODB, identity, { endpoint: wire.endpoint, pause: noPause }));
  });
  afterAll(async () => {
    table.destroy();
    await wire.stop();
  });
  beforeEach(() => wire.reset());

  it('tells its observers each request as it settled: the operation, the store\'s own input and answer, or the error, until undone', async () => {
    const seen: Parameters<TableObserver>[] = [];
    const undo = table.observe((...call) => seen.push(call));
    wire.answers = [
      { status: 200, body: '{"Item":{"pk":{"S":"A"},"n":{"N":"1"}}}' },
      { status: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}' },
    ];
    const got = await table.get({ TableName: 't', Key: { pk: 'A' } });
    const refused = await table.put({ TableName: 't', Item: { pk: 'A' }, ConditionExpression: 'attribute_not_exists(pk)' }).catch((e: unknown) => e);
    undo();
    await table.get({ TableName: 't', Key: { pk: 'B' } });
    expect(got.Item).toEqual({ pk: 'A', n: 1 });
    expect(seen.map(([operation, input, outcome]) => [operation, input, 'output' in outcome ? outcome.output : (outcome.error as Error).name])).toEqual([
      ['GetItem', { TableName: 't', Key: { pk: 'A' } }, { Item: { pk: 'A', n: 1 } }],
      ['PutItem', { TableName: 't', Item: { pk: 'A' }, ConditionExpression: 'attribute_not_exists(pk)' }, 'ConditionalCheckFailedException'],
    ]);
    expect(isConditionFailed(refused)).toBe(true);
    expect(wire.seen).toHaveLength(3);
  });

  it('names refused conditions and cancelled transactions by the error\'s name, with the reasons as sent', () => {
    const reasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { pk: { S: 'A' } } }];
    const cancelled = Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: reasons });
    expect(cancellationReasons(cancelled)).toEqual(reasons);
    expect(cancellationReasons(Object.assign(new Error('x'), { name: 'TransactionCanceledException' }))).toEqual([]);
    expect(cancellationReasons(Object.assign(new Error('x'), { name: 'ConditionalCheckFailedException' }))).toBeUndefined();
    expect(isConditionFailed(cancelled)).toBe(false);
    expect(isConditionFailed('ConditionalCheckFailedException')).toBe(false);
  });
});

describe('the identity of a process\'s AWS calls (shared/wiring/clients.ts)', () => {
  it('is the table\'s region, with DynamoDB Local\'s fixed credentials when the table has an endpoint, made once per config', async () => {
    const local = configFromEnv({ TABLE_NAME: 't', DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', AWS_REGION: 'eu-west-2' });
    expect(identityOf(local)).toBe(identityOf(local));
    expect(await identityOf(local).region()).toBe('eu-west-2');
    expect(await identityOf(local).credentials()).toEqual({ accessKeyId: 'local', secretAccessKey: 'local' });
    const aws = configFromEnv({ TABLE_NAME: 't' });
    expect(await identityOf(aws).region()).toBe('us-east-1');
    expect(identityOf(aws)).not.toBe(identityOf(local));
  });
});
