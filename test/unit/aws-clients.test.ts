/**
 * The wiring's AWS clients are the SDK's, configured as AWS documents them: what reaches the
 * wire (on a loopback stand-in for the AWS endpoints) carries the trace header under Lambda,
 * the SDK's user agent and a SigV4 signature; the SDK's environment settings
 * (AWS_ENDPOINT_URL, AWS_MAX_ATTEMPTS) are honoured; an error keeps AWS's request id.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SqsDeliveryQueue } from '../../shared/delivery/aws/sqs-queue';
import { configFromEnv } from '../../shared/config';
import { dynamoOf, sqsOf } from '../../shared/wiring/clients';

interface Seen {
  target: string;
  headers: IncomingHttpHeaders;
}

const TRACE = 'Root=1-674497a0-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

let server: Server;
let endpoint: string;
const seen: Seen[] = [];
/** Answers a 500 to this many requests before answering normally. */
let failures = 0;
/** Never answers (a stalled connection). */
let stall = false;
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      seen.push({ target, headers: req.headers });
      if (stall) return;
      if (failures > 0) {
        failures--;
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'REQ-FROM-AWS-1' });
        res.end(
          JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'internal' }),
        );
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as {
        MessageBody?: string;
        Entries?: { Id: string; MessageBody: string }[];
      };
      let answer: object = {};
      if (target === 'AmazonSQS.SendMessageBatch')
        answer = {
          Successful: (body.Entries ?? []).map((e) => ({
            Id: e.Id,
            MessageId: e.Id,
            MD5OfMessageBody: md5(e.MessageBody),
          })),
        };
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'REQ-OK' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // As Lambda sets them (the function, its trace, its role's credentials), with the SDK's own settings.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: 'AKIDLAMBDAROLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_SESSION_TOKEN: 'session',
    AWS_LAMBDA_FUNCTION_NAME: 'shop-calls-Deliver',
    _X_AMZN_TRACE_ID: TRACE,
    AWS_MAX_ATTEMPTS: '2',
  });
});
afterAll(async () => {
  process.env = saved;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
  failures = 0;
  stall = false;
});

/** A cloud config (no DynamoDB Local endpoint): the SDK finds its endpoint, credentials and retry settings itself. */
const cloudConfig = () =>
  configFromEnv({
    TABLE_NAME: 'shop-calls',
    AWS_REGION: 'eu-west-1',
    QUEUE_URL: `${endpoint}/123456789012/deliveries`,
  });

describe('the AWS clients of the wiring (the SDK)', () => {
  it('send the Lambda trace header, the SDK user agent and a SigV4 signature on every table and queue request', async () => {
    const config = cloudConfig();
    await dynamoOf(config).doc.get({ TableName: 'shop-calls', Key: { pk: 'SHOP#1', sk: 'PROFILE' } });
    await new SqsDeliveryQueue(sqsOf(config), config.queueUrl).send([
      { shop_id: 'shop_1', event_id: 'evt_1', delivery_id: 'dlv_1', endpoint_id: 'we_1', attempt: 1 },
    ]);
    expect(seen.map((s) => s.target)).toEqual(['DynamoDB_20120810.GetItem', 'AmazonSQS.SendMessageBatch']);
    for (const { headers } of seen) {
      expect(headers['x-amzn-trace-id']).toBe(TRACE);
      expect(headers['user-agent']).toMatch(/aws-sdk-js\/3\./);
      expect(headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDLAMBDAROLE\/\d{8}\/eu-west-1\/(dynamodb|sqs)\/aws4_request/,
      );
      expect(headers['x-amz-security-token']).toBe('session');
    }
  });

  it('send SQS requests to the endpoint the SDK resolves (here AWS_ENDPOINT_URL), not to the host named in the queue URL', async () => {
    const config = configFromEnv({
      TABLE_NAME: 'shop-calls',
      AWS_REGION: 'eu-west-1',
      QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
    });
    await new SqsDeliveryQueue(sqsOf(config), config.queueUrl).send([
      { shop_id: 'shop_1', event_id: 'evt_1', delivery_id: 'dlv_1', endpoint_id: 'we_1', attempt: 1 },
    ]);
    expect(seen.map((s) => s.target)).toEqual(['AmazonSQS.SendMessageBatch']);
  });

  it('retry as AWS_MAX_ATTEMPTS says, and an error keeps the request id AWS Support asks for', async () => {
    failures = 5;
    const error = await dynamoOf(cloudConfig())
      .doc.get({ TableName: 'shop-calls', Key: { pk: 'SHOP#1', sk: 'PROFILE' } })
      .then(
        () => undefined,
        (err: unknown) =>
          err as { name: string; $metadata: { requestId?: string; attempts?: number; httpStatusCode?: number } },
      );
    expect(error).toMatchObject({
      name: 'InternalServerError',
      $metadata: { requestId: 'REQ-FROM-AWS-1', attempts: 2, httpStatusCode: 500 },
    });
    expect(seen).toHaveLength(2);
  });

  it('give up on a stalled request after their bound (3 s in AWS) and retry it, instead of waiting out the invocation', async () => {
    stall = true;
    const started = Date.now();
    const error = await dynamoOf(cloudConfig())
      .doc.get({ TableName: 'shop-calls', Key: { pk: 'SHOP#1', sk: 'PROFILE' } })
      .then(
        () => undefined,
        (err: unknown) => err as { name: string; $metadata?: { attempts?: number } },
      );
    expect(error).toMatchObject({ name: 'TimeoutError', $metadata: { attempts: 2 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(6_000);
    expect(Date.now() - started).toBeLessThan(14_000);
  }, 20_000);
});
