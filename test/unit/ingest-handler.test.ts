import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { makeHandler, type IngestDeps } from '../../functions/ingest';
import { simulatedCall } from '../../lib/cli/simulate';
import { SqsIngestDeadLetters, type RefusedMessage } from '../../shared/aws/sqs-dead-letters';
import type { CallBatch, CallStore } from '../../shared/domain/calls';
import { createShop, type Shop } from '../../shared/domain/shop';
import { logger } from '../../shared/logger';
import type { Dynamo } from '../../shared/store/client';
import { DynamoCallStore } from '../../shared/store/calls';
import { MemoryShopStore } from '../helpers/memory-shops';

const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:ingest';
const record = (messageId: string, body: string) => ({
  messageId,
  body,
  receiptHandle: `rh-${messageId}`,
  eventSource: 'aws:sqs',
  eventSourceARN: QUEUE_ARN,
});
const batch = (...records: ReturnType<typeof record>[]) => ({ Records: records }) as unknown as SQSEvent;

/** A store that records each batch (or throws what `fail` says for a given external_id), a shop, and a dead-letter queue in memory. */
async function setup(fail: (externalId: string) => Error | null = () => null) {
  const shops = new MemoryShopStore();
  const recorded: CallBatch[] = [];
  const setAside: RefusedMessage[] = [];
  const calls = {
    record: async (b: CallBatch) => {
      const err = fail(b.call.external_id);
      if (err) throw err;
      recorded.push(b);
      return { status: 'recorded' as const };
    },
  } as unknown as CallStore;
  const deps: IngestDeps = {
    calls,
    shops,
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    ingestDeadLetters: { setAside: async (m) => void setAside.push(m) },
  };
  const shop: Shop = await createShop({ shops }, { name: 'Ace Plumbing', owner_email: 'o@ace.test' });
  const call = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify({
      ...simulatedCall(shop, { withJob: true, emergency: false, endedAt: new Date('2026-11-22T09:00:00Z') }),
      ...overrides,
    });
  return { deps, shop, recorded, setAside, call, handler: makeHandler(() => deps) };
}

describe('ingest from the queue (one call per message, partial batch responses)', () => {
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    error = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('records a good message (its call, job and events) and reports nothing failed', async () => {
    const { handler, recorded, setAside, call, shop } = await setup();
    const body = call({ external_id: 'vp-call-1' });
    expect(await handler(batch(record('m1', body)))).toEqual({ batchItemFailures: [] });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ shopId: shop.id, call: { external_id: 'vp-call-1', status: 'completed' } });
    expect(recorded[0]?.jobs).toHaveLength(1);
    expect(recorded[0]?.events.map((e) => e.type)).toEqual(['call.completed', 'job.created']);
    expect(setAside).toEqual([]);
  });

  it('sets a body that is not JSON aside at once, unchanged and with the reason, and reports it handled (it could never succeed)', async () => {
    const { handler, recorded, setAside } = await setup();
    expect(await handler(batch(record('m-bad', '{"shop_id": "shop_1",')))).toEqual({ batchItemFailures: [] });
    expect(recorded).toEqual([]);
    expect(setAside).toEqual([
      {
        messageId: 'm-bad',
        body: '{"shop_id": "shop_1",',
        error: { code: 'invalid_json', message: 'The message body is not valid JSON', param: null },
      },
    ]);
    expect(warn).toHaveBeenCalledWith(
      'Ingest refused; message set aside in the dead-letter queue',
      expect.objectContaining({ message_id: 'm-bad', code: 'invalid_json' }),
    );
  });

  it('sets a schema error aside with the field at fault, and logs the message id and the validation error (never the body)', async () => {
    const { handler, setAside, call } = await setup();
    const body = call({ from_number: '555-1234' });
    expect(await handler(batch(record('m-schema', body)))).toEqual({ batchItemFailures: [] });
    expect(setAside).toEqual([
      {
        messageId: 'm-schema',
        body,
        error: {
          code: 'parameter_invalid',
          message: expect.stringMatching(/^Invalid from_number: /),
          param: 'from_number',
        },
      },
    ]);
    const [line, fields] = warn.mock.calls[0] as [string, Record<string, unknown>];
    expect(line).toMatch(/set aside/);
    expect(fields).toEqual({
      message_id: 'm-schema',
      code: 'parameter_invalid',
      reason: expect.stringMatching(/^Invalid from_number/),
      param: 'from_number',
    });
    expect(JSON.stringify(warn.mock.calls)).not.toContain('555-1234');
  });

  it('sets a call for an unknown shop aside (a redrive records it once the shop exists)', async () => {
    const { handler, setAside, call } = await setup();
    expect(await handler(batch(record('m-shop', call({ shop_id: 'shop_01jd0000000000000000000000' }))))).toEqual({
      batchItemFailures: [],
    });
    expect(setAside.map((m) => [m.error.code, m.error.param])).toEqual([['resource_missing', 'shop_id']]);
  });

  it.each([
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', '\ud800'],
  ])('sets a call whose transcript text holds %s aside with the field at fault, recording nothing', async (_, text) => {
    const { handler, recorded, setAside, call } = await setup();
    const body = call({ transcript: [{ speaker: 'caller', text: `ok ${text}`, offset_ms: 0 }] });
    expect(body).toContain(JSON.stringify(text).slice(1, -1)); // the JSON escape, as a sender writes it
    expect(await handler(batch(record('m-text', body)))).toEqual({ batchItemFailures: [] });
    expect(recorded).toEqual([]);
    expect(setAside.map((m) => m.error)).toEqual([
      {
        code: 'parameter_invalid',
        message: expect.stringMatching(/^Invalid transcript\.0\.text: must not contain /),
        param: 'transcript.0.text',
      },
    ]);
  });

  it.each([
    ['[]', 'an array'],
    ['"call"', 'a string'],
    ['42', 'a number'],
    ['null', 'null'],
  ])('sets a body of %s aside as invalid_json that says it must be a JSON object, not %s', async (body, kind) => {
    const { handler, setAside } = await setup();
    expect(await handler(batch(record('m-kind', body)))).toEqual({ batchItemFailures: [] });
    expect(setAside.map((m) => m.error)).toEqual([
      { code: 'invalid_json', message: `The message body must be a JSON object ({...}), not ${kind}`, param: null },
    ]);
  });

  it.each([
    [
      'a ValidationException',
      Object.assign(new Error('Item size has exceeded the maximum allowed size'), { name: 'ValidationException' }),
    ],
    [
      "a transaction's ValidationError",
      Object.assign(new Error('Transaction cancelled, please refer cancellation reasons for specific reasons'), {
        name: 'TransactionCanceledException',
        CancellationReasons: [
          { Code: 'None' },
          { Code: 'ValidationError', Message: 'Item size has exceeded the maximum allowed size' },
        ],
      }),
    ],
  ])('sets a call DynamoDB refuses as too large (%s) aside at once with a code: it is not retried', async (_, err) => {
    const { deps, setAside, call } = await setup();
    const db = {
      tableName: 'calls',
      doc: { transactWrite: () => Promise.reject(err) },
    } as unknown as Dynamo;
    const handler = makeHandler(() => ({ ...deps, calls: new DynamoCallStore(db) }));
    expect(await handler(batch(record('m-big', call())))).toEqual({ batchItemFailures: [] });
    expect(setAside.map((m) => m.error)).toEqual([
      {
        code: 'parameter_invalid',
        message: expect.stringMatching(/^The call is too large to store; an item holds at most \d+ bytes/),
        param: null,
      },
    ]);
    expect(error).not.toHaveBeenCalled();
  });

  it('reports a store failure as a batch item failure, so SQS delivers that message again; the others of the batch are done', async () => {
    const { handler, recorded, setAside, call } = await setup((id) =>
      id === 'vp-throttled'
        ? Object.assign(new Error('Throughput exceeds the current capacity'), {
            name: 'ProvisionedThroughputExceededException',
          })
        : null,
    );
    const response = await handler(
      batch(
        record('m1', call({ external_id: 'vp-ok-1' })),
        record('m2', call({ external_id: 'vp-throttled' })),
        record('m3', 'not json'),
        record('m4', call({ external_id: 'vp-ok-2' })),
      ),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
    expect(recorded.map((b) => b.call.external_id)).toEqual(['vp-ok-1', 'vp-ok-2']);
    expect(setAside.map((m) => m.messageId)).toEqual(['m3']);
    expect(error).toHaveBeenCalledWith(
      'Ingest failed; the message comes back after its visibility timeout',
      expect.objectContaining({ message_id: 'm2' }),
    );
  });

  it('reports a refused message failed when it cannot be set aside: SQS retries it, and after 5 receives moves it to the same queue', async () => {
    const { deps, setAside } = await setup();
    const handler = makeHandler(() => ({
      ...deps,
      ingestDeadLetters: { setAside: () => Promise.reject(new Error('SQS unavailable')) },
    }));
    expect(await handler(batch(record('m-bad', 'not json')))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm-bad' }],
    });
    expect(setAside).toEqual([]);
    expect(error).toHaveBeenCalledWith(
      expect.stringMatching(/Could not set the refused message aside/),
      expect.objectContaining({ message_id: 'm-bad' }),
    );
  });

  it('still answers a direct invocation with a result, and takes an event that only looks like a batch as a (refused) call', async () => {
    const { handler, call, setAside } = await setup();
    expect(await handler(JSON.parse(call()))).toMatchObject({
      ok: true,
      result: { call_id: expect.stringMatching(/^call_/), duplicate: false },
    });
    expect(await handler({ Records: [] })).toMatchObject({
      ok: false,
      error: { code: 'parameter_missing', param: 'shop_id' },
    });
    expect(setAside).toEqual([]);
  });
});

describe('the ingest dead-letter queue on SQS', () => {
  const sqs = mockClient(SQSClient);
  afterEach(() => sqs.reset());

  it('sends the body unchanged, with the reason in the attributes Lambda gives failed asynchronous invocations', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'dlq-1' });
    const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/ingest-dlq';
    await new SqsIngestDeadLetters(new SQSClient({ region: 'eu-west-1' }), url).setAside({
      messageId: 'm-1',
      body: '{"shop_id":"shop_1"}',
      error: {
        code: 'parameter_missing',
        message: `Missing required parameter: external_id${'!'.repeat(2000)}`,
        param: 'external_id',
      },
    });
    expect(sqs).toHaveReceivedCommandTimes(SendMessageCommand, 1);
    const input = sqs.commandCalls(SendMessageCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ QueueUrl: url, MessageBody: '{"shop_id":"shop_1"}' });
    expect(input?.MessageAttributes).toMatchObject({
      ErrorCode: { DataType: 'String', StringValue: 'parameter_missing' },
      SourceMessageId: { DataType: 'String', StringValue: 'm-1' },
      ErrorParam: { DataType: 'String', StringValue: 'external_id' },
    });
    expect(input?.MessageAttributes?.ErrorMessage?.StringValue).toHaveLength(1000);
  });
});
