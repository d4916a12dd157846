import type { SQSEvent } from 'aws-lambda';
import { makeHandler, type IngestDeps } from '../../functions/ingest';
import { simulatedCall } from '../../lib/cli/simulate';
import type { RefusedMessage } from '../../shared/aws/sqs-dead-letters';
import { TRANSCRIPT_MAX_BYTES, type CallIngest } from '../../shared/domain/call-ingest-schema';
import { ingestCall } from '../../shared/domain/calls';
import { createShop, type Shop } from '../../shared/domain/shop';
import { isItemTooLarge, itemBytes } from '../../shared/store/item-size';
import { logger } from '../../shared/logger';
import type { ApiDeps } from '../../shared/wiring/api';
import { eventsOf } from '../helpers/events-in-table';
import { useFreshTable } from '../helpers/table';

const HAN = '漢'; // 1 UTF-16 code unit, 3 UTF-8 bytes
const utf8 = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** `chars` characters of multi-byte text as transcript turns of at most 5000 characters (the per-turn limit). */
function transcriptOf(chars: number, tail = ''): CallIngest['transcript'] {
  const turns: CallIngest['transcript'] = [];
  for (let left = chars; left > 0; left -= 5000) {
    const speaker = turns.length % 2 === 0 ? ('caller' as const) : ('agent' as const);
    turns.push({ speaker, text: HAN.repeat(Math.min(left, 5000)), offset_ms: turns.length * 1000 });
  }
  if (tail) turns.push({ speaker: 'agent', text: tail, offset_ms: turns.length * 1000 });
  return turns;
}

/** A transcript of exactly `bytes` bytes as UTF-8 JSON: as much multi-byte text as fits, then ASCII to the byte. */
function transcriptOfBytes(bytes: number): CallIngest['transcript'] {
  let [low, high] = [0, Math.ceil(bytes / 3)];
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (utf8(transcriptOf(mid, 'x')) <= bytes) low = mid;
    else high = mid - 1;
  }
  return transcriptOf(low, 'x'.repeat(1 + bytes - utf8(transcriptOf(low, 'x'))));
}

describe('ingest measures what it stores in bytes (DynamoDB Local)', () => {
  let deps: ApiDeps;
  let shop: Shop;
  let setAside: RefusedMessage[];
  let handler: ReturnType<typeof makeHandler>;
  beforeAll(async () => {
    deps = await useFreshTable();
    shop = await createShop(deps, { name: 'Byte Shop', owner_email: 'o@bytes.test' });
  });
  beforeEach(() => {
    setAside = [];
    const ingestDeps: IngestDeps = { ...deps, ingestDeadLetters: { setAside: async (m) => void setAside.push(m) } };
    handler = makeHandler(() => ingestDeps);
    jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  const call = (overrides: Partial<CallIngest>): CallIngest => ({
    ...simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() }),
    ...overrides,
  });
  const delivery = (messageId: string, body: string) =>
    ({ Records: [{ messageId, body, eventSource: 'aws:sqs' }] }) as unknown as SQSEvent;
  const recordedCalls = async () => (await deps.calls.list(shop.id, { limit: 100 })).items;

  it('sets a 151,443-character (451 KB) transcript aside at once, with a code and the field: not retried, nothing stored', async () => {
    const transcript = transcriptOf(151_443);
    expect(transcript.reduce((n, t) => n + t.text.length, 0)).toBe(151_443);
    const body = JSON.stringify(call({ external_id: 'vp-cjk-451kb', transcript }));
    expect(Buffer.byteLength(body)).toBeGreaterThan(451_905);
    const credits = (await deps.shops.get(shop.id))?.credits;

    // Each delivery of the message is settled at once: SQS never has to deliver it again.
    expect(await handler(delivery('m-cjk', body))).toEqual({ batchItemFailures: [] });
    expect(setAside).toEqual([
      {
        messageId: 'm-cjk',
        body,
        error: {
          code: 'parameter_invalid',
          message: expect.stringMatching(/^Invalid transcript: is \d+ bytes as JSON \(UTF-8\); at most 350000$/),
          param: 'transcript',
        },
      },
    ]);
    expect(await recordedCalls()).toEqual([]);
    expect(await eventsOf(deps, shop.id)).toEqual([]);
    expect((await deps.shops.get(shop.id))?.credits).toEqual(credits);
  });

  it(`stores a call with a multi-byte transcript of exactly ${TRANSCRIPT_MAX_BYTES} bytes whole, and reads it back equal`, async () => {
    const transcript = transcriptOfBytes(TRANSCRIPT_MAX_BYTES);
    expect(utf8(transcript)).toBe(TRANSCRIPT_MAX_BYTES);
    const input = call({ external_id: 'vp-cjk-at-limit', transcript });
    input.summary = { ...input.summary!, summary: HAN.repeat(4000) };

    expect(await handler(delivery('m-at-limit', JSON.stringify(input)))).toEqual({ batchItemFailures: [] });
    expect(setAside).toEqual([]);
    const [recorded] = (await recordedCalls()).filter((c) => c.external_id === 'vp-cjk-at-limit');
    expect(recorded).toBeDefined();
    const stored = await deps.calls.getTranscript(shop.id, recorded!.id);
    expect(stored?.turns).toEqual(transcript.map((t, index) => ({ index, ...t })));
    expect((await deps.calls.getSummary(shop.id, recorded!.id))?.summary).toBe(HAN.repeat(4000));
  });

  it('refuses a call whose stored item would be over the limit before writing anything, naming the field', async () => {
    // Past the schema (a caller of the domain, not the queue): the store measures every item itself.
    const input = call({ external_id: 'vp-cjk-job' });
    const job = {
      customer: { name: null, phone: null, address: null },
      service: 'Leak repair',
      description: HAN.repeat(140_000),
      urgency: 'routine' as const,
      requested_window: null,
    };
    await expect(ingestCall(deps, { ...input, jobs: [job] })).rejects.toMatchObject({
      code: 'parameter_invalid',
      options: { param: 'jobs.0' },
      message: expect.stringMatching(/^Invalid jobs\.0: is too large to store \(\d+ bytes\); an item holds at most/),
    });
    expect((await recordedCalls()).map((c) => c.external_id)).not.toContain('vp-cjk-job');
  });

  it('measures an item as DynamoDB does: one of 409,600 bytes (400 KB) is stored, one byte more is refused as too large', async () => {
    const item = (bytes: number, sk: string) => {
      const base = { pk: 'SIZE#probe', sk, n: 12345, text: '' };
      const text = HAN.repeat(Math.floor((bytes - itemBytes(base)) / 3));
      return { ...base, text: text + 'x'.repeat(bytes - itemBytes({ ...base, text })) };
    };
    const fits = item(409_600, 'fits');
    const over = item(409_601, 'over');
    expect([itemBytes(fits), itemBytes(over)]).toEqual([409_600, 409_601]);
    await deps.db.doc.put({ TableName: deps.db.tableName, Item: fits });
    const refused = await deps.db.doc.put({ TableName: deps.db.tableName, Item: over }).catch((err: unknown) => err);
    expect(isItemTooLarge(refused)).toBe(true);
  });
});
