import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
  /**
   * The data key KMS "generates" and "decrypts" (its plaintext and blob), so sealed items seeded elsewhere open
   * here.
   */
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

type DataKey = AwsStub['dataKey'];
type Json = Record<string, unknown>;

/** What the answers read (the table, the data key, the extension's secret) and what they tally for the benchmark. */
interface StubState {
  table: StubTable;
  dataKey: DataKey;
  secretString: string;
  calls: Record<string, number>;
  errors: string[];
}

export async function startAwsStub(secretString: string): Promise<AwsStub> {
  const dataKey = {
    plaintext: createHash('sha256').update('cold-start data key').digest(),
    blob: Buffer.from(`bench-kms-blob:${'k'.repeat(32)}`),
  };
  const state: StubState = { table: new StubTable([]), dataKey, secretString, calls: {}, errors: [] };
  const server = createServer((req, res) => void serve(state, req, res));
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataKey,
    setTable: (items) => {
      state.table = new StubTable(items);
    },
    takeCalls: () => {
      const out = state.calls;
      state.calls = {};
      return out;
    },
    takeErrors: () => {
      const out = state.errors;
      state.errors = [];
      return out;
    },
    close: () => close(server),
  };
}

/** Listens on a free loopback port, and says which. */
async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the AWS stub has no port');
  return address.port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close').catch(() => undefined);
}

const count = (state: StubState, name: string) => (state.calls[name] = (state.calls[name] ?? 0) + 1);

/**
 * Answers one request: a JSON protocol call (it names its operation in X-Amz-Target) or a
 * REST one; a request it cannot answer is noted for the benchmark and gets an AWS-shaped 400.
 */
async function serve(state: StubState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const text = await bodyOf(req);
  const target = req.headers['x-amz-target'];
  try {
    if (typeof target === 'string') {
      const body = answerJson(state, target, text ? (JSON.parse(text) as Json) : {});
      const type = target.startsWith('TrentService') ? 'application/x-amz-json-1.1' : 'application/x-amz-json-1.0';
      send(res, 200, type, JSON.stringify(body));
      return;
    }
    const out = answerRest(state, req, new URL(req.url ?? '/', 'http://stub'));
    send(res, out.status, 'application/json', out.body === undefined ? '' : JSON.stringify(out.body));
  } catch (err) {
    state.errors.push(`${req.method} ${req.url} ${String(target ?? '')}: ${(err as Error).message}`);
    const body = JSON.stringify({ __type: 'com.amazonaws.bench#StubError', message: (err as Error).message });
    send(res, 400, 'application/x-amz-json-1.0', body);
  }
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'content-type': type,
    'x-amzn-requestid': randomUUID(),
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The JSON protocols' services (DynamoDB, SQS, KMS), each request counted as its service and operation. */
function answerJson(state: StubState, target: string, input: Json): Json {
  const [prefix, operation = ''] = target.split('.');
  if (prefix === 'DynamoDB_20120810') {
    count(state, `DynamoDB ${operation}`);
    return state.table.answer(operation, input);
  }
  if (prefix === 'AmazonSQS') {
    count(state, `SQS ${operation}`);
    const answer = answerSqs(operation, input);
    if (answer) return answer;
  }
  if (prefix === 'TrentService') {
    count(state, `KMS ${operation}`);
    const answer = answerKms(state.dataKey, operation, input);
    if (answer) return answer;
  }
  throw new Error(`no answer for ${target}`);
}

/** Message ids with the MD5 of each body, which the SDK checks; undefined for an operation it does not answer. */
function answerSqs(operation: string, input: Json): Json | undefined {
  if (operation === 'SendMessage') return { MessageId: randomUUID(), MD5OfMessageBody: md5(String(input.MessageBody)) };
  if (operation === 'SendMessageBatch') {
    const entries = (input.Entries ?? []) as { Id: string; MessageBody: string }[];
    return {
      Successful: entries.map((e) => ({ Id: e.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(e.MessageBody) })),
      Failed: [],
    };
  }
  // The sweeper's drain of the delivery dead-letter queue: empty, as it usually is.
  if (operation === 'ReceiveMessage') return { Messages: [] };
  return undefined;
}

/** The one data key, generated and decrypted; undefined for an operation it does not answer. */
function answerKms(dataKey: DataKey, operation: string, input: Json): Json | undefined {
  const keyId = String(input.KeyId ?? 'arn:aws:kms:us-east-1:123456789012:key/bench');
  if (operation === 'GenerateDataKey')
    return {
      KeyId: keyId,
      Plaintext: dataKey.plaintext.toString('base64'),
      CiphertextBlob: dataKey.blob.toString('base64'),
    };
  if (operation !== 'Decrypt') return undefined;
  if (!Buffer.from(String(input.CiphertextBlob), 'base64').equals(dataKey.blob))
    throw new Error('KMS Decrypt of a blob this stub never made');
  return { KeyId: keyId, Plaintext: dataKey.plaintext.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
}

/** The REST endpoints: the secrets extension, the webhook receivers, Scheduler and SES v2. */
function answerRest(state: StubState, req: IncomingMessage, url: URL): { status: number; body?: unknown } {
  if (req.method === 'GET' && url.pathname === '/secretsmanager/get') {
    count(state, 'Secrets extension GetSecretValue');
    if (!req.headers['x-aws-parameters-secrets-token']) return { status: 401 };
    return {
      status: 200,
      body: {
        ARN: url.searchParams.get('secretId'),
        Name: 'cursor',
        SecretString: state.secretString,
        VersionId: 'v1',
      },
    };
  }
  if (req.method === 'POST' && url.pathname.startsWith('/hooks')) {
    count(state, 'webhook POST');
    return { status: 204 };
  }
  if (req.method === 'POST' && url.pathname.startsWith('/schedules/')) {
    count(state, 'Scheduler CreateSchedule');
    const name = decodeURIComponent(url.pathname.slice('/schedules/'.length));
    return { status: 200, body: { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${name}` } };
  }
  if (req.method === 'POST' && url.pathname === '/v2/email/outbound-emails') {
    count(state, 'SES SendEmail');
    return { status: 200, body: { MessageId: randomUUID() } };
  }
  throw new Error(`no answer for ${req.method} ${url.pathname}`);
}
