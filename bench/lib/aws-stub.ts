import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StubTable, type Item } from './stub-table';

/**
 * Every AWS endpoint a function calls, answered on one loopback port, for the cold-start
 * benchmark (a benchmark tool: nothing here ships). The SDK clients reach it through
 * AWS_ENDPOINT_URL and the queue URLs; the Parameters and Secrets extension (a GET on
 * localhost) and the webhook receivers are served here too, so a measured process sends
 * nothing beyond this machine. Answers are the services' documented bodies:
 *
 * - DynamoDB (JSON 1.0, `X-Amz-Target: DynamoDB_20120810.*`): a frozen seeded table (bench/lib/stub-table.ts);
 * - SQS (JSON 1.0, `AmazonSQS.*`): message ids, with the MD5 of each body the SDK checks; an empty receive;
 * - KMS (JSON 1.1, `TrentService.*`): one fixed 32-byte data key, which Decrypt gives back;
 * - EventBridge Scheduler and SES v2 (REST JSON): a schedule ARN, a message id;
 * - the extension: `{"SecretString": …}` to a caller that presents a session token;
 * - POST /hooks/…: a webhook receiver that answers 204.
 *
 * Each request is counted by service and operation, so the benchmark can say what a first
 * invocation asked of AWS.
 */
export interface AwsStub {
  url: string;
  port: number;
  /** The data key KMS "generates" and "decrypts" (its plaintext and blob), so sealed items seeded elsewhere open here. */
  dataKey: { plaintext: Buffer; blob: Buffer };
  /** Serves reads from these items from now on (writes are always acknowledged and dropped). */
  setTable(items: readonly Item[]): void;
  /** Requests since the last call, e.g. { 'DynamoDB GetItem': 1, 'KMS Decrypt': 1 }; resets the count. */
  takeCalls(): Record<string, number>;
  /** Requests the stub could not answer (a scenario that went off the expected path), since the last call. */
  takeErrors(): string[];
  close(): Promise<void>;
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

export async function startAwsStub(secretString: string): Promise<AwsStub> {
  const dataKey = {
    plaintext: createHash('sha256').update('cold-start data key').digest(),
    blob: Buffer.from(`bench-kms-blob:${'k'.repeat(32)}`),
  };
  let table = new StubTable([]);
  let calls: Record<string, number> = {};
  let errors: string[] = [];
  const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1);

  const json1 = (target: string, input: Record<string, unknown>): Record<string, unknown> => {
    const [prefix, operation = ''] = target.split('.');
    if (prefix === 'DynamoDB_20120810') {
      count(`DynamoDB ${operation}`);
      return table.answer(operation, input);
    }
    if (prefix === 'AmazonSQS') {
      count(`SQS ${operation}`);
      if (operation === 'SendMessage')
        return { MessageId: randomUUID(), MD5OfMessageBody: md5(String(input.MessageBody)) };
      if (operation === 'SendMessageBatch') {
        const entries = (input.Entries ?? []) as { Id: string; MessageBody: string }[];
        return {
          Successful: entries.map((e) => ({ Id: e.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(e.MessageBody) })),
          Failed: [],
        };
      }
      // The sweeper's drain of the delivery dead-letter queue: empty, as it usually is.
      if (operation === 'ReceiveMessage') return { Messages: [] };
    }
    if (prefix === 'TrentService') {
      count(`KMS ${operation}`);
      const keyId = String(input.KeyId ?? 'arn:aws:kms:us-east-1:123456789012:key/bench');
      if (operation === 'GenerateDataKey')
        return {
          KeyId: keyId,
          Plaintext: dataKey.plaintext.toString('base64'),
          CiphertextBlob: dataKey.blob.toString('base64'),
        };
      if (operation === 'Decrypt') {
        if (Buffer.from(String(input.CiphertextBlob), 'base64').equals(dataKey.blob))
          return {
            KeyId: keyId,
            Plaintext: dataKey.plaintext.toString('base64'),
            EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
          };
        throw new Error('KMS Decrypt of a blob this stub never made');
      }
    }
    throw new Error(`no answer for ${target}`);
  };

  const rest = (req: IncomingMessage, url: URL): { status: number; body?: unknown } => {
    if (req.method === 'GET' && url.pathname === '/secretsmanager/get') {
      count('Secrets extension GetSecretValue');
      if (!req.headers['x-aws-parameters-secrets-token']) return { status: 401 };
      return {
        status: 200,
        body: { ARN: url.searchParams.get('secretId'), Name: 'cursor', SecretString: secretString, VersionId: 'v1' },
      };
    }
    if (req.method === 'POST' && url.pathname.startsWith('/hooks')) {
      count('webhook POST');
      return { status: 204 };
    }
    if (req.method === 'POST' && url.pathname.startsWith('/schedules/')) {
      count('Scheduler CreateSchedule');
      return {
        status: 200,
        body: {
          ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${decodeURIComponent(url.pathname.slice('/schedules/'.length))}`,
        },
      };
    }
    if (req.method === 'POST' && url.pathname === '/v2/email/outbound-emails') {
      count('SES SendEmail');
      return { status: 200, body: { MessageId: randomUUID() } };
    }
    throw new Error(`no answer for ${req.method} ${url.pathname}`);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const target = req.headers['x-amz-target'];
    try {
      if (typeof target === 'string') {
        const body = JSON.stringify(json1(target, text ? (JSON.parse(text) as Record<string, unknown>) : {}));
        const type = target.startsWith('TrentService') ? 'application/x-amz-json-1.1' : 'application/x-amz-json-1.0';
        res.writeHead(200, {
          'content-type': type,
          'x-amzn-requestid': randomUUID(),
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
        return;
      }
      const out = rest(req, new URL(req.url ?? '/', 'http://stub'));
      const body = out.body === undefined ? '' : JSON.stringify(out.body);
      res.writeHead(out.status, {
        'content-type': 'application/json',
        'x-amzn-requestid': randomUUID(),
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    } catch (err) {
      errors.push(`${req.method} ${req.url} ${String(target ?? '')}: ${(err as Error).message}`);
      const body = JSON.stringify({ __type: 'com.amazonaws.bench#StubError', message: (err as Error).message });
      res.writeHead(400, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': randomUUID(),
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    }
  };

  const server = createServer((req, res) => void serve(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the AWS stub has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    dataKey,
    setTable: (items) => {
      table = new StubTable(items);
    },
    takeCalls: () => {
      const out = calls;
      calls = {};
      return out;
    },
    takeErrors: () => {
      const out = errors;
      errors = [];
      return out;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
