import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256Js } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { AwsApi, SCHEDULER } from '../../shared/aws/aws-call';
import { HttpScheduleApi, type CreateScheduleInput } from '../../shared/aws/schedule-api';

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret-test', sessionToken: 'token-test' };
const identity = { region: () => Promise.resolve('eu-west-1'), credentials: () => Promise.resolve(credentials) };
const input: CreateScheduleInput = {
  Name: 'dlv_01jd0000000000000000000000-a3',
  GroupName: 'deliveries',
  ScheduleExpression: 'at(2026-11-21T20:34:05)',
  ScheduleExpressionTimezone: 'UTC',
  FlexibleTimeWindow: { Mode: 'OFF' },
  ActionAfterCompletion: 'DELETE',
  Target: {
    Arn: 'arn:aws:sqs:eu-west-1:1:deliveries',
    RoleArn: 'arn:aws:iam::1:role/sched',
    Input: '{"delivery_id":"dlv_1"}',
    RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 3600 },
    DeadLetterConfig: { Arn: 'arn:aws:sqs:eu-west-1:1:sched-dlq' },
  },
};

describe('EventBridge Scheduler CreateSchedule over signed HTTP', () => {
  let server: Server;
  let endpoint: string;
  let seen: Seen[];
  let answers: { status: number; headers?: Record<string, string>; body?: string }[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
        const answer = answers.shift() ?? { status: 200, body: '{"ScheduleArn":"arn:aws:scheduler:eu-west-1:1:schedule/deliveries/x"}' };
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    seen = [];
    answers = [];
  });

  const api = () => new HttpScheduleApi(new AwsApi(SCHEDULER, identity, { endpoint, pause: () => Promise.resolve() }));

  it('POSTs the schedule to /schedules/{Name} as REST-JSON with an idempotency token, signed for scheduler in the region', async () => {
    await api().create(input);
    expect(seen).toHaveLength(1);
    const [req] = seen as [Seen];
    expect([req.method, req.url]).toEqual(['POST', '/schedules/dlv_01jd0000000000000000000000-a3']);
    const { Name: _name, ...fields } = input;
    const body = JSON.parse(req.body) as Record<string, unknown>;
    expect(body).toEqual({ ...fields, ClientToken: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-amz-security-token']).toBe('token-test');
    expect(req.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-1\/scheduler\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);

    // The signature is the SDK signer's for what arrived (so the body sent is the body signed).
    const amzDate = req.headers['x-amz-date'] as string;
    const reference = await new SignatureV4({ service: 'scheduler', region: 'eu-west-1', credentials, sha256: Sha256Js }).sign(
      {
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        port: Number(new URL(endpoint).port),
        path: req.url as string,
        query: {},
        headers: { host: req.headers.host as string, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)) },
        body: req.body,
      },
      { signingDate: new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`) },
    );
    expect(req.headers.authorization).toBe(reference.headers.authorization);
  });

  it('names an existing schedule ConflictException, without retrying', async () => {
    answers = [{ status: 409, headers: { 'x-amzn-errortype': 'ConflictException:http://internal.amazon.com/coral/' }, body: '{"message":"Schedule already exists."}' }];
    await expect(api().create(input)).rejects.toMatchObject({ name: 'ConflictException', message: 'Schedule already exists.' });
    expect(seen).toHaveLength(1);
  });

  it('retries throttling and server errors with the same token, up to 3 attempts', async () => {
    answers = [{ status: 500, body: '{"__type":"InternalServerException","message":"x"}' }, { status: 400, headers: { 'x-amzn-errortype': 'ThrottlingException' } }];
    await api().create(input);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => (JSON.parse(s.body) as { ClientToken: string }).ClientToken)).size).toBe(1);

    seen = [];
    answers = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }];
    await expect(api().create(input)).rejects.toMatchObject({ name: 'HTTP503' });
    expect(seen).toHaveLength(3);
  });

  it('does not retry a refused request', async () => {
    answers = [{ status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: '{"message":"bad expression"}' }];
    await expect(api().create(input)).rejects.toMatchObject({ name: 'ValidationException', message: 'bad expression' });
    expect(seen).toHaveLength(1);
  });
});
