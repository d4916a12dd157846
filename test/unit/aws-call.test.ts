import { AwsApi, AwsServiceError, KMS, regionalEndpoint, RETRY_QUOTA, SCHEDULER, SQS, type AwsService } from '../../shared/aws/aws-call';
import { expectValidSignature, identity, noPause, startAwsWire, type AwsWire } from '../helpers/aws-wire';

let wire: AwsWire;
beforeAll(async () => {
  wire = await startAwsWire();
});
afterAll(() => wire.stop());
beforeEach(() => wire.reset());

const api = (service: AwsService = KMS, timeoutMs?: number) => new AwsApi(service, identity, { endpoint: wire.endpoint, pause: noPause, timeoutMs });
const call = (a = api()) => a.call({ operation: 'Decrypt', input: { CiphertextBlob: 'AAEC' } });

describe('a signed AWS API call', () => {
  it('speaks awsJson 1.0 and 1.1: POST / with the target header, the protocol content type and the JSON input, signed for the service', async () => {
    await api(SQS).call({ operation: 'SendMessage', input: { QueueUrl: 'q', MessageBody: 'b' } });
    await api(KMS).call({ operation: 'GenerateDataKey', input: { KeyId: 'k' } });
    const [sqs, kms] = wire.seen;
    expect([sqs?.method, sqs?.url, sqs?.headers['x-amz-target'], sqs?.headers['content-type'], sqs?.headers['x-amzn-query-mode']]).toEqual(['POST', '/', 'AmazonSQS.SendMessage', 'application/x-amz-json-1.0', 'true']);
    expect([kms?.method, kms?.url, kms?.headers['x-amz-target'], kms?.headers['content-type']]).toEqual(['POST', '/', 'TrentService.GenerateDataKey', 'application/x-amz-json-1.1']);
    expect(JSON.parse(kms?.body ?? '')).toEqual({ KeyId: 'k' });
    await expectValidSignature(sqs as never, 'sqs');
    await expectValidSignature(kms as never, 'kms');
  });

  it('speaks REST-JSON: POST to the path, application/json, no target header', async () => {
    await api(SCHEDULER).call({ operation: 'CreateSchedule', path: '/schedules/a%20b', input: { GroupName: 'g' } });
    const [req] = wire.seen;
    expect([req?.url, req?.headers['content-type'], req?.headers['x-amz-target']]).toEqual(['/schedules/a%20b', 'application/json', undefined]);
    await expectValidSignature(req as never, 'scheduler');
  });

  it('returns the answer\'s JSON as is (an empty body as {})', async () => {
    wire.answers = [{ status: 200, body: '{"Plaintext":"AQID","KeyId":"k"}' }, { status: 200, body: '' }];
    expect(await call()).toEqual({ Plaintext: 'AQID', KeyId: 'k' });
    expect(await call()).toEqual({});
  });

  it('names errors as the SDK does: x-amzn-errortype, else code, else __type; after # and before :', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ 'x-amzn-errortype': 'ConflictException:http://internal.amazon.com/coral/com.amazonaws.scheduler/' }, '{"message":"exists"}', 'ConflictException'],
      [{}, '{"__type":"com.amazonaws.kms#KMSInvalidStateException","message":"pending deletion"}', 'KMSInvalidStateException'],
      [{}, '{"code":"NotFoundException","Message":"no such thing"}', 'NotFoundException'],
      [{}, 'not json', 'HTTP404'],
    ];
    for (const [headers, body, name] of cases) {
      wire.answers = [{ status: 404, headers, body }];
      const err = (await call().catch((e: unknown) => e)) as AwsServiceError;
      expect(err).toBeInstanceOf(AwsServiceError);
      expect([err.name, err.status, err.$metadata.httpStatusCode]).toEqual([name, 404, 404]);
    }
    wire.answers = [{ status: 400, headers: { 'x-amzn-query-error': 'AWS.SimpleQueueService.NonExistentQueue;Sender' }, body: '{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}' }];
    await expect(call()).rejects.toMatchObject({ name: 'QueueDoesNotExist', Code: 'AWS.SimpleQueueService.NonExistentQueue', message: 'The specified queue does not exist.' });
  });

  it('retries 5xx, 429 and throttling names, sending the same bytes each time, up to 3 attempts', async () => {
    wire.answers = [{ status: 500, body: '{"__type":"KMSInternalException"}' }, { status: 400, body: '{"__type":"ThrottlingException"}' }, { status: 200, body: '{"Plaintext":"AQID"}' }];
    expect(await call()).toEqual({ Plaintext: 'AQID' });
    expect(wire.seen).toHaveLength(3);
    expect(new Set(wire.seen.map((s) => s.body)).size).toBe(1);

    wire.reset();
    wire.answers = [{ status: 429 }, { status: 200, body: '{}' }];
    await call();
    expect(wire.seen).toHaveLength(2);

    wire.reset();
    wire.answers = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }];
    await expect(call()).rejects.toMatchObject({ name: 'HTTP503', status: 503 });
    expect(wire.seen).toHaveLength(3);
  });

  it('stops retrying once its retry quota is spent, as the SDK does, and earns it back with successes', async () => {
    const failing = { status: 500, body: '{"__type":"KMSInternalException"}' };
    const client = api();
    // 500 tokens, 14 a retry: 35 retries, then failures are not retried (17 calls of 2 retries, then one with 1).
    const attempts: number[] = [];
    for (let i = 0; i < 19; i++) {
      wire.reset();
      wire.answers = [failing, failing, failing];
      await expect(call(client)).rejects.toMatchObject({ status: 500 });
      attempts.push(wire.seen.length);
    }
    const retries = Math.floor(RETRY_QUOTA.capacity / RETRY_QUOTA.cost);
    expect(attempts).toEqual([...Array<number>(17).fill(3), 2, 1]);
    expect(attempts.reduce((a, n) => a + n - 1, 0)).toBe(retries);
    // Another client has a quota of its own.
    wire.reset();
    wire.answers = [failing, { status: 200, body: '{}' }];
    await call(api());
    expect(wire.seen).toHaveLength(2);
    // Successes without a retry give back 1 token each: 4 more make the 10 left 14, one retry's worth.
    for (let i = 0; i < RETRY_QUOTA.cost - (RETRY_QUOTA.capacity % RETRY_QUOTA.cost); i++) await call(client);
    wire.reset();
    wire.answers = [failing, failing];
    await expect(call(client)).rejects.toMatchObject({ status: 500 });
    expect(wire.seen).toHaveLength(2);
    // Throttling costs 5: the 10 tokens left after successes allow two throttled retries.
    for (let i = 0; i < 10; i++) await call(client);
    wire.reset();
    wire.answers = [{ status: 400, body: '{"__type":"ThrottlingException"}' }, { status: 400, body: '{"__type":"ThrottlingException"}' }, { status: 200, body: '{}' }];
    await call(client);
    expect(wire.seen).toHaveLength(3);
    // That success gave its last retry's cost back (5), not 1: one throttled retry more, but not a 14-token one.
    wire.reset();
    wire.answers = [{ status: 400, body: '{"__type":"ThrottlingException"}' }, { status: 200, body: '{}' }];
    await call(client);
    expect(wire.seen).toHaveLength(2);
    wire.reset();
    wire.answers = [failing, { status: 200, body: '{}' }];
    await expect(call(client)).rejects.toMatchObject({ status: 500 });
    expect(wire.seen).toHaveLength(1);
  });

  it('does not retry a client error, nor a server error the SDK does not (501, 505)', async () => {
    wire.answers = [{ status: 400, body: '{"__type":"com.amazonaws.kms#InvalidCiphertextException"}' }];
    await expect(call()).rejects.toMatchObject({ name: 'InvalidCiphertextException', status: 400 });
    expect(wire.seen).toHaveLength(1);
    for (const status of [501, 505]) {
      wire.reset();
      wire.answers = [{ status }, { status: 200, body: '{}' }];
      await expect(call()).rejects.toMatchObject({ status });
      expect(wire.seen).toHaveLength(1);
    }
  });

  it('retries a dropped connection', async () => {
    wire.answers = ['reset', { status: 200, body: '{"ok":1}' }];
    expect(await call()).toEqual({ ok: 1 });
    expect(wire.seen).toHaveLength(2);
  });

  it('bounds each attempt, answer body included, and retries one that found no answer in time', async () => {
    wire.answers = ['hang', 'stall', { status: 200, body: '{"ok":1}' }];
    const started = Date.now();
    expect(await call(api(KMS, 200))).toEqual({ ok: 1 });
    expect(wire.seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(2000);

    wire.reset();
    wire.answers = ['hang', 'hang', 'hang'];
    await expect(call(api(KMS, 100))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(wire.seen).toHaveLength(3);
  });

  it('lets a request bound its attempts itself, longer or shorter than the API\'s', async () => {
    // A long poll answers after its wait: under the API's 100 ms it is retried and times out, under its own bound it is answered once.
    wire.answers = [{ status: 200, body: '{"ok":1}', delayMs: 300 }];
    expect(await api(KMS, 100).call({ operation: 'Decrypt', input: {}, timeoutMs: 2_000 })).toEqual({ ok: 1 });
    expect(wire.seen).toHaveLength(1);

    wire.reset();
    wire.answers = ['hang', 'hang', 'hang'];
    const started = Date.now();
    await expect(api(KMS).call({ operation: 'Decrypt', input: {}, timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError', message: 'kms Decrypt: no answer within 100 ms' });
    expect(wire.seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  describe('aborted', () => {
    const untilSeen = async (n: number) => {
      while (wire.seen.length < n) await new Promise((r) => setTimeout(r, 5));
    };

    it('rejects at once when its signal aborts while an attempt waits for its answer, and makes no other attempt', async () => {
      wire.answers = ['hang', { status: 200, body: '{"ok":1}' }];
      const stop = new AbortController();
      const pending = api(SQS, 30_000).call({ operation: 'ReceiveMessage', input: { QueueUrl: 'q', WaitTimeSeconds: 20 }, signal: stop.signal, timeoutMs: 25_000 });
      await untilSeen(1);
      const started = Date.now();
      stop.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError', message: 'sqs ReceiveMessage: aborted' });
      expect(Date.now() - started).toBeLessThan(200);
      await new Promise((r) => setTimeout(r, 100));
      expect(wire.seen).toHaveLength(1);
    });

    it('while an answer\'s body is still coming', async () => {
      wire.answers = ['stall', { status: 200, body: '{"ok":1}' }];
      const stop = new AbortController();
      const pending = api(KMS, 30_000).call({ operation: 'Decrypt', input: {}, signal: stop.signal });
      await untilSeen(1);
      await new Promise((r) => setTimeout(r, 50));
      stop.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      expect(wire.seen).toHaveLength(1);
    });

    it('during the back-off before a retry', async () => {
      wire.answers = [{ status: 503 }, { status: 200, body: '{"ok":1}' }];
      const stop = new AbortController();
      let pausing = false;
      const slowPause = () => {
        pausing = true;
        return new Promise<void>((r) => setTimeout(r, 10_000).unref());
      };
      const pending = new AwsApi(KMS, identity, { endpoint: wire.endpoint, pause: slowPause }).call({ operation: 'Decrypt', input: {}, signal: stop.signal });
      while (!pausing) await new Promise((r) => setTimeout(r, 5));
      const started = Date.now();
      stop.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      expect(Date.now() - started).toBeLessThan(200);
      expect(wire.seen).toHaveLength(1);
    });

    it('before it started: no request at all', async () => {
      await expect(api().call({ operation: 'Decrypt', input: {}, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
      expect(wire.seen).toHaveLength(0);
    });

    it('a signal that never aborts changes nothing', async () => {
      wire.answers = [{ status: 500 }, { status: 200, body: '{"ok":1}' }];
      expect(await api().call({ operation: 'Decrypt', input: {}, signal: new AbortController().signal })).toEqual({ ok: 1 });
      expect(wire.seen).toHaveLength(2);
    });
  });

  it('goes to the regional endpoint by default', () => {
    expect(regionalEndpoint(SQS, 'eu-west-1')).toBe('https://sqs.eu-west-1.amazonaws.com');
    expect(regionalEndpoint({ ...KMS }, 'cn-north-1')).toBe('https://kms.cn-north-1.amazonaws.com.cn');
  });
});
