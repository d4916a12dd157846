/**
 * The functions' own AWS calls (shared/aws/aws-call.ts) against the SDK clients they replace:
 * each call is sent once through the SDK and once through the adapter to the same stand-in
 * endpoint, and the two requests must be the same call (method, path, target, content type,
 * JSON body; each signature verifying), and the same answer must read the same, errors included.
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { AwsApi, DYNAMODB, KMS, SES_V2, SQS } from '../../shared/aws/aws-call';
import { TableClient } from '../../shared/store/table-api';
import { SesMailer } from '../../shared/aws/ses-mailer';
import { SqsNotificationQueue } from '../../shared/aws/sqs-notification-queue';
import { SqsDeliveryQueue, SqsQueueDelays } from '../../shared/aws/sqs-queue';
import { sendMessageBatch } from '../../shared/aws/sqs-send';
import { KmsDataKeys } from '../../shared/secrets/kms-data-keys';
import { callOf, expectValidSignature, identity, noPause, sdkOptions, startAwsWire, type AwsWire, type Seen } from '../helpers/aws-wire';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const key = Buffer.alloc(32, 7);
const blob = Buffer.from([0, 1, 2, 250, 251, 252, 99]);

/** Answers as the services do: SQS with the MD5 of what it stored, KMS with base64 blobs, SES with a message id. */
function serviceAnswer(req: Seen) {
  const body = JSON.parse(req.body || '{}') as { MessageBody?: string; Entries?: { Id: string; MessageBody: string }[] };
  switch (req.headers['x-amz-target']) {
    case 'AmazonSQS.SendMessage':
      return { status: 200, body: JSON.stringify({ MessageId: 'm-1', MD5OfMessageBody: md5(body.MessageBody ?? '') }) };
    case 'AmazonSQS.SendMessageBatch': {
      const [first, ...rest] = body.Entries ?? [];
      return {
        status: 200,
        body: JSON.stringify({
          Successful: rest.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })),
          Failed: first ? [{ Id: first.Id, SenderFault: false, Code: 'InternalError', Message: 'try again' }] : [],
        }),
      };
    }
    case 'TrentService.GenerateDataKey':
      return { status: 200, body: JSON.stringify({ CiphertextBlob: blob.toString('base64'), Plaintext: key.toString('base64'), KeyId: 'arn:aws:kms:eu-west-1:1:key/k' }) };
    case 'TrentService.Decrypt':
      return { status: 200, body: JSON.stringify({ Plaintext: key.toString('base64'), KeyId: 'arn:aws:kms:eu-west-1:1:key/k', EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' }) };
    default:
      return { status: 200, body: '{"MessageId":"ses-1"}' };
  }
}

let wire: AwsWire;
let queueUrl: string;
beforeAll(async () => {
  wire = await startAwsWire(serviceAnswer);
  queueUrl = `${wire.endpoint}/123456789012/deliveries`;
});
afterAll(() => wire.stop());
beforeEach(() => wire.reset());

/** The last two requests (the SDK's, then ours) are the same call, and both signatures verify. */
async function expectSameCall(service: string, ignore: string[] = []) {
  const [sdk, ours] = wire.seen.slice(-2) as [Seen, Seen];
  expect(callOf(ours, ignore)).toEqual(callOf(sdk, ignore));
  await expectValidSignature(sdk, service);
  await expectValidSignature(ours, service);
}

// SQS: no endpoint override on our side, as in AWS: the queue URL's host is the endpoint (the SDK's default too).
const sqsApi = () => new AwsApi(SQS, identity, { pause: noPause });
const sqsClient = (attempts = 1) => new SQSClient(sdkOptions(wire.endpoint, attempts));
const kmsApi = () => new AwsApi(KMS, identity, { endpoint: wire.endpoint, pause: noPause });
const kmsClient = () => new KMSClient(sdkOptions(wire.endpoint));
const message = { shop_id: 'shop_1', event_id: 'evt_1', delivery_id: 'dlv_1', endpoint_id: 'we_1', attempt: 2 };

describe('SQS SendMessage', () => {
  it('is the SDK\'s request, to the queue URL\'s host, and checks the MD5 of the stored body as the SDK does', async () => {
    await sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }));
    await new SqsNotificationQueue(sqsApi(), queueUrl).send(message);
    await expectSameCall('sqs');

    await sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: 60 }));
    await new SqsQueueDelays(new SqsDeliveryQueue(sqsApi(), queueUrl), () => 0).schedule(message, new Date(60_000));
    await expectSameCall('sqs');

    wire.answers = [{ status: 200, body: '{"MessageId":"m","MD5OfMessageBody":"0000"}' }, { status: 200, body: '{"MessageId":"m","MD5OfMessageBody":"0000"}' }];
    await expect(sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }))).rejects.toThrow('InvalidChecksumError');
    await expect(new SqsNotificationQueue(sqsApi(), queueUrl).send(message)).rejects.toThrow('InvalidChecksumError');
  });

  it('names a missing queue as the SDK does (the JSON type, and the Query code as Code)', async () => {
    const missing = { status: 400, headers: { 'x-amzn-query-error': 'AWS.SimpleQueueService.NonExistentQueue;Sender' }, body: '{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}' };
    wire.answers = [missing, missing];
    const sdk = (await sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })).catch((e: unknown) => e)) as Error & { Code?: string };
    const ours = (await new SqsNotificationQueue(sqsApi(), queueUrl).send(message).catch((e: unknown) => e)) as Error & { Code?: string };
    expect([ours.name, ours.Code, ours.message]).toEqual([sdk.name, sdk.Code, sdk.message]);
    expect(ours.name).toBe('QueueDoesNotExist');
  });

  it('retries a server error and throttling, then succeeds, as the SDK does', async () => {
    const flaky = () => [{ status: 500, body: '{"__type":"com.amazonaws.sqs#InternalError"}' }, { status: 400, headers: { 'x-amzn-query-error': 'RequestThrottled;Sender' }, body: '{"__type":"com.amazonaws.sqs#RequestThrottled"}' }];
    wire.answers = flaky();
    await sqsClient(3).send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }));
    const sdkAttempts = wire.seen.length;
    wire.reset();
    wire.answers = flaky();
    await new SqsNotificationQueue(sqsApi(), queueUrl).send(message);
    expect([wire.seen.length, sdkAttempts]).toEqual([3, 3]);
  });
});

describe('SQS SendMessageBatch', () => {
  it('is the SDK\'s request, and reads the entries SQS did not take the same', async () => {
    const entries = [0, 1, 2].map((i) => ({ Id: String(i), MessageBody: JSON.stringify({ ...message, delivery_id: `dlv_${i}` }) }));
    const sdk = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    const ours = await sendMessageBatch(sqsApi(), queueUrl, entries);
    await expectSameCall('sqs');
    expect(ours.Failed).toEqual(sdk.Failed);
    expect(ours.Failed.map((f) => f.Id)).toEqual(['0']);
  });

  it('refuses an answer whose MD5 is not the body sent, as the SDK does', async () => {
    const entries = [{ Id: '0', MessageBody: 'a' }];
    const corrupt = { status: 200, body: '{"Successful":[{"Id":"0","MessageId":"m-0","MD5OfMessageBody":"0000"}],"Failed":[]}' };
    wire.answers = [corrupt, corrupt];
    await expect(sqsClient().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }))).rejects.toThrow('Invalid MD5 checksum on messages: m-0');
    await expect(sendMessageBatch(sqsApi(), queueUrl, entries)).rejects.toThrow('Invalid MD5 checksum on messages: m-0');
  });
});

describe('KMS GenerateDataKey and Decrypt', () => {
  it('are the SDK\'s requests, and read the base64 blobs into the same bytes', async () => {
    const sdkKey = await kmsClient().send(new GenerateDataKeyCommand({ KeyId: 'alias/webhooks', KeySpec: 'AES_256' }));
    const keys = new KmsDataKeys(kmsApi(), 'alias/webhooks');
    const current = await keys.current();
    await expectSameCall('kms');
    expect(current.key).toEqual(Buffer.from(sdkKey.Plaintext as Uint8Array));
    expect(current.ref).toBe(Buffer.from(sdkKey.CiphertextBlob as Uint8Array).toString('base64url'));
    expect(Buffer.from(current.ref, 'base64url')).toEqual(blob);

    const sdkPlain = await kmsClient().send(new DecryptCommand({ CiphertextBlob: blob, KeyId: 'alias/webhooks' }));
    const resolved = await new KmsDataKeys(kmsApi(), 'alias/webhooks').resolve(current.ref);
    await expectSameCall('kms');
    expect(resolved).toEqual(Buffer.from(sdkPlain.Plaintext as Uint8Array));
  });

  it('name a key that cannot be used as the SDK does', async () => {
    const disabled = { status: 400, body: '{"__type":"KMSInvalidStateException","message":"arn:aws:kms:eu-west-1:1:key/k is pending deletion."}' };
    wire.answers = [disabled, disabled];
    const sdk = (await kmsClient().send(new DecryptCommand({ CiphertextBlob: blob })).catch((e: unknown) => e)) as Error;
    const ours = (await new KmsDataKeys(kmsApi(), 'k').resolve(blob.toString('base64url')).catch((e: unknown) => e)) as Error;
    expect([ours.name, ours.message]).toEqual([sdk.name, sdk.message]);
    expect(ours.name).toBe('KMSInvalidStateException');
  });
});

describe('SES v2 SendEmail', () => {
  const from = 'alerts@shop-calls.example';
  const mail = { to: 'owner@shop.test', subject: 'Endpoint disabled', text: 'Your webhook endpoint was disabled.' };
  const sdkSend = () =>
    new SESv2Client(sdkOptions(wire.endpoint)).send(
      new SendEmailCommand({ FromEmailAddress: from, Destination: { ToAddresses: [mail.to] }, Content: { Simple: { Subject: { Data: mail.subject }, Body: { Text: { Data: mail.text } } } } }),
    );
  const mailer = () => new SesMailer(new AwsApi(SES_V2, identity, { endpoint: wire.endpoint, pause: noPause }), from);

  it('is the SDK\'s request: POST /v2/email/outbound-emails, REST-JSON, signed for ses', async () => {
    await sdkSend();
    await mailer().send(mail);
    await expectSameCall('ses');
    expect(wire.seen[1]?.url).toBe('/v2/email/outbound-emails');
  });

  it('names a refused message as the SDK does', async () => {
    const rejected = { status: 400, headers: { 'x-amzn-errortype': 'MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/' }, body: '{"message":"Email address is not verified."}' };
    wire.answers = [rejected, rejected];
    const sdk = (await sdkSend().catch((e: unknown) => e)) as Error;
    const ours = (await mailer().send(mail).catch((e: unknown) => e)) as Error;
    expect([ours.name, ours.message]).toEqual([sdk.name, sdk.message]);
    expect(ours.name).toBe('MessageRejected');
  });
});

describe('DynamoDB through the table client (shared/store/table-api.ts)', () => {
  // As shared/store/client.ts configured the SDK's document client.
  const sdkDoc = (maxAttempts?: number) =>
    DynamoDBDocumentClient.from(new DynamoDBClient({ ...sdkOptions(wire.endpoint), maxAttempts }), { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
  const table = () => new TableClient(new AwsApi(DYNAMODB, identity, { endpoint: wire.endpoint, pause: noPause }));
  const withoutMetadata = ({ $metadata: _m, ...rest }: { $metadata?: unknown }) => rest;
  const item = { pk: 'SHOP#1', sk: 'EP#1', n: 3, f: 1.5, ok: true, none: null, gone: undefined, tags: new Set(['a', 'b']), list: [1, 'x', { deep: undefined, keep: 'y' }], map: { a: { b: 2 } }, empty: '' };
  const marshalled = { pk: { S: 'SHOP#1' }, sk: { S: 'EP#1' }, n: { N: '3' }, map: { M: { a: { M: { b: { N: '2' } } } } }, list: { L: [{ N: '1' }, { S: 'x' }] }, tags: { SS: ['a', 'b'] } };
  const json = (body: unknown) => ({ status: 200, body: JSON.stringify(body) });

  /** Sends `sdk` then `ours` with the same answer; the two requests must be the same call, and the two answers read the same. */
  async function same<T>(answer: unknown, sdk: () => Promise<T & { $metadata?: unknown }>, ours: () => Promise<T>): Promise<T> {
    wire.answers = [json(answer), json(answer)];
    const a = withoutMetadata(await sdk());
    const b = await ours();
    await expectSameCall('dynamodb');
    expect(b).toEqual(a);
    return b;
  }

  it('sends each operation as the SDK\'s document client does, and reads each answer the same', async () => {
    const doc = sdkDoc(1);
    const t = table();
    const key = { pk: 'SHOP#1', sk: 'EP#1' };
    const got = await same({ Item: marshalled }, () => doc.send(new GetCommand({ TableName: 't', Key: key, ConsistentRead: true })), () => t.get({ TableName: 't', Key: key, ConsistentRead: true }));
    expect(got.Item).toMatchObject({ n: 3, map: { a: { b: 2 } }, tags: new Set(['a', 'b']) });
    expect(wire.seen[1]?.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
    expect(wire.seen[1]?.headers['content-type']).toBe('application/x-amz-json-1.0');
    await same({}, () => doc.send(new GetCommand({ TableName: 't', Key: key })), () => t.get({ TableName: 't', Key: key }));

    const put = { TableName: 't', Item: item, ConditionExpression: 'attribute_not_exists(pk) OR v < :v', ExpressionAttributeValues: { ':v': 2, ':u': undefined }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
    await same({}, () => doc.send(new PutCommand(put)), () => t.put(put));

    const update = { TableName: 't', Key: key, UpdateExpression: 'SET #s = :s, m = :m ADD c :one', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': 'x', ':m': { a: [1, { b: undefined }] }, ':one': 1 }, ReturnValues: 'ALL_NEW' as const };
    await same({ Attributes: marshalled }, () => doc.send(new UpdateCommand(update)), () => t.update(update));

    const del = { TableName: 't', Key: key, ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': 1 }, ReturnValues: 'ALL_OLD' as const };
    await same({ Attributes: marshalled }, () => doc.send(new DeleteCommand(del)), () => t.delete(del));

    const query = { TableName: 't', IndexName: 'gsi1', KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': 'SHOP#1', ':p': 'EP#' }, ExclusiveStartKey: key, Limit: 2, ScanIndexForward: false };
    await same({ Items: [marshalled, { pk: { S: 'SHOP#1' }, sk: { S: 'EP#2' } }], Count: 2, ScannedCount: 2, LastEvaluatedKey: { pk: { S: 'SHOP#1' }, sk: { S: 'EP#2' } } }, () => doc.send(new QueryCommand(query)), () => t.query(query));
    await same({ Items: [], Count: 0, ScannedCount: 0 }, () => doc.send(new QueryCommand({ TableName: 't', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'x' } })), () => t.query({ TableName: 't', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'x' } }));

    const scan = { TableName: 't', FilterExpression: 'entity = :e', ExpressionAttributeValues: { ':e': 'shop' }, ExclusiveStartKey: key };
    await same({ Items: [marshalled], Count: 1, ScannedCount: 5 }, () => doc.send(new ScanCommand(scan)), () => t.scan(scan));

    const batchGet = { RequestItems: { t: { Keys: [key, { pk: 'SHOP#2', sk: 'EP#1' }], ConsistentRead: true, ProjectionExpression: 'pk, sk, n' } } };
    await same({ Responses: { t: [marshalled] }, UnprocessedKeys: { t: { Keys: [{ pk: { S: 'SHOP#2' }, sk: { S: 'EP#1' } }], ConsistentRead: true } } }, () => doc.send(new BatchGetCommand(batchGet)), () => t.batchGet(batchGet));

    const batchWrite = { RequestItems: { t: [{ PutRequest: { Item: item } }, { DeleteRequest: { Key: key } }] } };
    await same({ UnprocessedItems: { t: [{ PutRequest: { Item: marshalled } }, { DeleteRequest: { Key: { pk: { S: 'SHOP#1' }, sk: { S: 'EP#1' } } } }] } }, () => doc.send(new BatchWriteCommand(batchWrite)), () => t.batchWrite(batchWrite));
    await same({ UnprocessedItems: {} }, () => doc.send(new BatchWriteCommand(batchWrite)), () => t.batchWrite(batchWrite));

    const transact = {
      TransactItems: [
        { ConditionCheck: { TableName: 't', Key: { pk: 'SHOP#1', sk: 'PROFILE' }, ConditionExpression: 'endpoints < :max', ExpressionAttributeValues: { ':max': 10 } } },
        { Put: { TableName: 't', Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Update: { ...update, ReturnValues: undefined, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } },
        { Delete: { TableName: 't', Key: key, ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': 1 } } },
      ],
      ClientRequestToken: 'token-1',
    };
    await same({}, () => doc.send(new TransactWriteCommand(transact)), () => t.transactWrite(transact));
  });

  it('keeps a refused condition\'s item and a cancelled transaction\'s reasons marshalled, as the SDK\'s exceptions have them', async () => {
    const refused = { status: 400, body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'The conditional request failed', Item: marshalled }) };
    wire.answers = [refused, refused];
    const put = { TableName: 't', Item: { pk: 'SHOP#1', sk: 'EP#1' }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
    const sdk = (await sdkDoc(1).send(new PutCommand(put)).catch((e: unknown) => e)) as Error & { Item?: unknown };
    const ours = (await table().put(put).catch((e: unknown) => e)) as Error & { Item?: unknown };
    expect([ours.name, ours.message, ours.Item]).toEqual([sdk.name, sdk.message, sdk.Item]);
    expect(ours.Item).toEqual(marshalled);

    const reasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: marshalled }];
    const cancelled = { status: 400, body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', Message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]', CancellationReasons: reasons }) };
    wire.answers = [cancelled, cancelled];
    const transact = { TransactItems: [{ Put: { TableName: 't', Item: { pk: 'a', sk: 'b' } } }, { ConditionCheck: { TableName: 't', Key: { pk: 'c', sk: 'd' }, ConditionExpression: 'attribute_exists(pk)' } }] };
    const sdkT = (await sdkDoc(1).send(new TransactWriteCommand(transact)).catch((e: unknown) => e)) as Error & { CancellationReasons?: unknown };
    const oursT = (await table().transactWrite(transact).catch((e: unknown) => e)) as Error & { CancellationReasons?: unknown };
    expect([oursT.name, oursT.message, oursT.CancellationReasons]).toEqual([sdkT.name, sdkT.message, sdkT.CancellationReasons]);
    expect(oursT.CancellationReasons).toEqual(reasons);
  });

  it('retries as the SDK\'s DynamoDB client does by default: a server error up to 4 attempts, a transaction conflict not at all', async () => {
    const get = { TableName: 't', Key: { pk: 'a', sk: 'b' } };
    const attempts = async (answer: { status: number; body: string }, send: () => Promise<unknown>) => {
      wire.reset();
      wire.answers = Array(6).fill(answer);
      await send().catch(() => undefined);
      return wire.seen.length;
    };
    const failing = { status: 500, body: '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error"}' };
    const conflict = { status: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#TransactionConflictException","message":"Transaction is ongoing for the item"}' };
    for (const answer of [failing, conflict]) {
      const sdk = await attempts(answer, () => sdkDoc().send(new GetCommand(get)));
      const ours = await attempts(answer, () => table().get(get));
      expect(ours).toBe(sdk);
    }
    expect(await attempts(failing, () => table().get(get))).toBe(4);
    expect(await attempts(conflict, () => table().get(get))).toBe(1);
  });
});
