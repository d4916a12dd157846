import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startAwsStub, type AwsStub } from '../../bench/lib/aws-stub';
import { parseConditions } from '../../bench/lib/stub-table';
import { secretFromExtension } from '../../shared/aws/secrets-extension';
import { EnvelopeCipher } from '../../shared/secrets/envelope';
import { KmsDataKeys } from '../../shared/secrets/kms-data-keys';

/** The cold-start benchmark's loopback AWS (bench/lib/aws-stub.ts), spoken to by the SDK clients the functions use. */
describe('benchmark AWS stub', () => {
  let stub: AwsStub;
  const config = () => ({
    endpoint: stub.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  const items = [
    { pk: 'SHOP#1', sk: 'CALL#a', n: 1 },
    { pk: 'SHOP#1', sk: 'CALL#b', n: 2 },
    { pk: 'SHOP#1', sk: 'CALL#c', n: 3 },
    { pk: 'SHOP#1', sk: 'JOB#a', n: 4, gsi2pk: 'X', gsi2sk: '1', status: 'pending' },
    { pk: 'SHOP#2', sk: 'CALL#a', n: 5 },
  ];

  beforeAll(async () => {
    stub = await startAwsStub('a-cursor-secret-of-at-least-32-chars');
    stub.setTable(items.map((i) => marshall(i)));
  });
  afterAll(() => stub.close());
  afterEach(() => expect(stub.takeErrors()).toEqual([]));

  it('reads the seeded table as DynamoDB does, and acknowledges writes without keeping them', async () => {
    const doc = DynamoDBDocument.from(new DynamoDBClient(config()));
    expect((await doc.get({ TableName: 't', Key: { pk: 'SHOP#1', sk: 'CALL#b' } })).Item).toEqual(items[1]);
    expect((await doc.get({ TableName: 't', Key: { pk: 'SHOP#1', sk: 'CALL#z' } })).Item).toBeUndefined();
    const page = await doc.query({
      TableName: 't',
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': 'SHOP#1', ':p': 'CALL#' },
      ScanIndexForward: false,
      Limit: 2,
    });
    expect(page.Items?.map((i) => i.sk)).toEqual(['CALL#c', 'CALL#b']);
    expect(page.LastEvaluatedKey).toEqual({ pk: 'SHOP#1', sk: 'CALL#b' });
    const next = await doc.query({
      TableName: 't',
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': 'SHOP#1', ':p': 'CALL#' },
      ScanIndexForward: false,
      Limit: 2,
      ExclusiveStartKey: page.LastEvaluatedKey,
    });
    expect(next.Items?.map((i) => i.sk)).toEqual(['CALL#a']);
    expect(next.LastEvaluatedKey).toBeUndefined();
    // An INCLUDE index gives back its keys and projected attributes only.
    const index = await doc.query({
      TableName: 't',
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      FilterExpression: '#s = :s',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':pk': 'X', ':s': 'pending' },
    });
    expect(index.Items).toEqual([{ pk: 'SHOP#1', sk: 'JOB#a', gsi2pk: 'X', gsi2sk: '1', status: 'pending' }]);
    await doc.put({
      TableName: 't',
      Item: { pk: 'SHOP#1', sk: 'CALL#z' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect((await doc.get({ TableName: 't', Key: { pk: 'SHOP#1', sk: 'CALL#z' } })).Item).toBeUndefined();
    expect(stub.takeCalls()).toEqual({ 'DynamoDB GetItem': 3, 'DynamoDB Query': 3, 'DynamoDB PutItem': 1 });
  });

  it('evaluates the comparisons, BETWEEN, begins_with and attribute_(not_)exists the stores write, and refuses what it cannot', () => {
    const values = marshall({ ':lo': 2, ':hi': 3, ':p': 'CALL#' });
    const between = parseConditions('n BETWEEN :lo AND :hi AND begins_with(sk, :p)', {}, values);
    expect(items.filter((i) => between(marshall(i))).map((i) => i.n)).toEqual([2, 3]);
    const unindexed = parseConditions('begins_with(sk, :p) AND attribute_not_exists(#g)', { '#g': 'gsi2pk' }, values);
    expect(unindexed(marshall({ sk: 'CALL#a' }))).toBe(true);
    expect(unindexed(marshall({ sk: 'CALL#a', gsi2pk: 'DUE#1' }))).toBe(false);
    expect(parseConditions('attribute_exists(pk)')(marshall({ pk: 'x' }))).toBe(true);
    expect(() => parseConditions('size(pk) > :lo', {}, values)).toThrow(/unsupported/);
  });

  it('answers SQS with the MD5 of each body the SDK checks, Scheduler and SES with their ids', async () => {
    const sqs = new SQSClient(config());
    const queueUrl = `${stub.url}/123456789012/q`;
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'hello' }))).resolves.toMatchObject(
      { MD5OfMessageBody: '5d41402abc4b2a76b9719d911017c592' },
    );
    const batch = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: '1', MessageBody: 'a' },
          { Id: '2', MessageBody: 'b' },
        ],
      }),
    );
    expect(batch.Successful).toHaveLength(2);
    const schedule = await new SchedulerClient(config()).send(
      new CreateScheduleCommand({
        Name: 'd-a2',
        ScheduleExpression: 'at(2030-01-01T00:00:00)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: { Arn: 'arn:q', RoleArn: 'arn:r' },
      }),
    );
    expect(schedule.ScheduleArn).toMatch(/schedule\/d-a2$/);
    const mail = await new SESv2Client(config()).send(
      new SendEmailCommand({
        FromEmailAddress: 'a@b.test',
        Destination: { ToAddresses: ['c@d.test'] },
        Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
      }),
    );
    expect(mail.MessageId).toBeDefined();
    expect(stub.takeCalls()).toEqual({
      'SQS SendMessage': 1,
      'SQS SendMessageBatch': 1,
      'Scheduler CreateSchedule': 1,
      'SES SendEmail': 1,
    });
  });

  it('gives back its one data key, so a secret sealed through it opens through it', async () => {
    const keys = () =>
      new EnvelopeCipher(new KmsDataKeys(new KMSClient(config()), 'arn:aws:kms:us-east-1:123456789012:key/k'));
    const sealed = await keys().encrypt('whsec_x', 'ctx', 'shop_1');
    // A fresh cipher holds no key: it asks KMS to decrypt the one in the ciphertext.
    await expect(keys().decrypt(sealed, 'ctx', 'shop_1')).resolves.toBe('whsec_x');
    expect(stub.takeCalls()).toEqual({ 'KMS GenerateDataKey': 1, 'KMS Decrypt': 1 });
  });

  it('serves the Parameters and Secrets extension to a caller with a session token, and webhooks', async () => {
    await expect(secretFromExtension('arn:secret', { port: stub.port, token: 'session' })).resolves.toBe(
      'a-cursor-secret-of-at-least-32-chars',
    );
    await expect(secretFromExtension('arn:secret', { port: stub.port, token: '' })).rejects.toThrow(/401/);
    const hook = await fetch(`${stub.url}/hooks/1`, { method: 'POST', body: '{}' });
    expect(hook.status).toBe(204);
    expect(stub.takeCalls()).toEqual({ 'Secrets extension GetSecretValue': 2, 'webhook POST': 1 });
  });
});
