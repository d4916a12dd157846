/**
 * The functions' own AWS calls (shared/aws/aws-call.ts) against the SDK clients they replace:
 * each call is sent once through the SDK and once through the adapter to the same stand-in
 * endpoint, and the two requests must be the same call (method, path, target, content type,
 * JSON body; each signature verifying), and the same answer must read the same, errors included.
 */
import { createHash } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AwsApi, KMS, SES_V2, SQS } from '../../shared/aws/aws-call';
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
