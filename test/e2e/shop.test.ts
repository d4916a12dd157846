import { call, expectError } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

describe('GET and PATCH /v1/shop through the local HTTP adapter', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  let key: string;
  beforeAll(async () => {
    stack = await startTestStack();
    key = stack.demo.writeKey.key;
  });
  afterAll(() => stack.stop());

  const getShop = async () => (await call(stack.url, 'GET', '/v1/shop', { key })).json;

  it('patches fields and returns the whole shop', async () => {
    const reply = await call(stack.url, 'PATCH', '/v1/shop', {
      key,
      body: {
        greeting: 'Thanks for calling!',
        timezone: 'America/Chicago',
        booking_mode: 'auto_book',
        paused: true,
        pause_reason: 'Holiday',
        emergency_triggers: ['gas leak'],
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({
      object: 'shop',
      greeting: 'Thanks for calling!',
      timezone: 'America/Chicago',
      booking_mode: 'auto_book',
      paused: true,
      pause_reason: 'Holiday',
      emergency_triggers: ['gas leak'],
    });
    expect(await getShop()).toEqual(reply.json);
    const me = await call(stack.url, 'GET', '/v1/me', { key });
    expect((me.json.line as Record<string, unknown>).status).toBe('paused');
  });

  const big = JSON.stringify({ greeting: 'x'.repeat(100 * 1024) });
  const cases: [string, { rawBody?: string; body?: unknown; headers?: Record<string, string> }, number, string][] = [
    [
      'truncated JSON',
      { rawBody: '{"greeting":', headers: { 'content-type': 'application/json' } },
      400,
      'invalid_json',
    ],
    ['a JSON array', { rawBody: '[]', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
    ['a JSON string', { rawBody: '"hi"', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
    [
      'text/plain',
      { rawBody: '{"greeting":"hi"}', headers: { 'content-type': 'text/plain' } },
      415,
      'unsupported_media_type',
    ],
    ['no content type', { rawBody: '{"greeting":"hi"}' }, 415, 'unsupported_media_type'],
    ['a 100 KiB body', { rawBody: big, headers: { 'content-type': 'application/json' } }, 413, 'body_too_large'],
    ['an unknown field', { body: { greeting: 'hi', colour: 'red' } }, 400, 'parameter_unknown'],
    ['a read-only field', { body: { phone_number: '+15555550100' } }, 400, 'parameter_unknown'],
    ['greeting as a number', { body: { greeting: 5 } }, 400, 'parameter_invalid'],
    ['an empty greeting', { body: { greeting: '' } }, 400, 'parameter_invalid'],
    ['a 1001-character greeting', { body: { greeting: 'g'.repeat(1001) } }, 400, 'parameter_invalid'],
    ['a bad time zone', { body: { timezone: 'Atlantis/Capital' } }, 400, 'parameter_invalid'],
    ['close before open', { body: { hours: { mon: [{ open: '17:00', close: '09:00' }] } } }, 400, 'parameter_invalid'],
    [
      'overlapping intervals',
      {
        body: {
          hours: {
            tue: [
              { open: '08:00', close: '12:00' },
              { open: '11:30', close: '15:00' },
            ],
          },
        },
      },
      400,
      'parameter_invalid',
    ],
    ['an unknown weekday', { body: { hours: { funday: [] } } }, 400, 'parameter_unknown'],
    ['a malformed time', { body: { hours: { wed: [{ open: '8am', close: '5pm' }] } } }, 400, 'parameter_invalid'],
    ['hours as a list', { body: { hours: [] } }, 400, 'parameter_invalid'],
    ['an unknown booking mode', { body: { booking_mode: 'yolo' } }, 400, 'parameter_invalid'],
    [
      '51 emergency triggers',
      { body: { emergency_triggers: Array.from({ length: 51 }, (_, i) => `t${i}`) } },
      400,
      'parameter_invalid',
    ],
    ['an empty trigger', { body: { emergency_triggers: [''] } }, 400, 'parameter_invalid'],
    ['paused as a string', { body: { paused: 'true' } }, 400, 'parameter_invalid'],
    ['a reason while unpausing', { body: { paused: false, pause_reason: 'x' } }, 400, 'parameter_invalid'],
    [
      'an invalid Idempotency-Key',
      { body: { greeting: 'hi' }, headers: { 'idempotency-key': 'x'.repeat(300) } },
      400,
      'parameter_invalid',
    ],
  ];

  it.each(cases)('%s → %d %s and the shop is unchanged', async (_label, opts, status, code) => {
    const before = await getShop();
    const reply = await call(stack.url, 'PATCH', '/v1/shop', { key, ...opts });
    expectError(reply, status, code);
    expect(await getShop()).toEqual(before);
  });

  const json = { 'content-type': 'application/json' };

  it.each([
    ['NUL in the greeting', '{"greeting":"Hi\\u0000there"}', 'greeting', 'NUL (U+0000)'],
    ['a lone high surrogate in the greeting', '{"greeting":"Hi \\ud800"}', 'greeting', 'lone surrogate'],
    [
      'a lone low surrogate in a trigger',
      '{"emergency_triggers":["gas leak","\\udc00 leak"]}',
      'emergency_triggers.1',
      'lone surrogate',
    ],
    [
      'a pair cut in half in the pause reason',
      '{"paused":true,"pause_reason":"Away \\ud83d"}',
      'pause_reason',
      'lone surrogate',
    ],
  ])(
    '%s (a JSON escape) → 400 naming the field, and the shop is unchanged',
    async (_label, rawBody, param, problem) => {
      const before = await getShop();
      const reply = await call(stack.url, 'PATCH', '/v1/shop', { key, rawBody, headers: json });
      const error = expectError(reply, 400, 'parameter_invalid');
      expect(error.param).toBe(param);
      expect(error.message).toMatch(`Invalid ${param}: must not contain`);
      expect(error.message).toContain(problem);
      expect(await getShop()).toEqual(before);
    },
  );

  it('a surrogate pair (an emoji) is text: stored and read back as sent', async () => {
    const reply = await call(stack.url, 'PATCH', '/v1/shop', {
      key,
      rawBody: '{"pause_reason":"Back soon \\ud83d\\ude00","paused":true}',
      headers: json,
    });
    expect(reply.status).toBe(200);
    expect((await getShop()).pause_reason).toBe('Back soon \u{1F600}');
  });

  it.each([
    ['[]', 'an array'],
    ['"greeting"', 'a string'],
    ['1000', 'a number'],
    ['true', 'a boolean'],
    ['null', 'null'],
  ])('a body of %s → 400 invalid_json saying the body must be a JSON object, not %s', async (rawBody, kind) => {
    const before = await getShop();
    const reply = await call(stack.url, 'PATCH', '/v1/shop', { key, rawBody, headers: json });
    expect(expectError(reply, 400, 'invalid_json')).toMatchObject({
      param: null,
      message: `Request body must be a JSON object ({...}), not ${kind}.`,
    });
    expect(await getShop()).toEqual(before);
  });

  it('10 concurrent PATCHes with one Idempotency-Key execute once', async () => {
    const send = () =>
      call(stack.url, 'PATCH', '/v1/shop', {
        key,
        body: { greeting: 'Only once' },
        headers: { 'idempotency-key': 'e2e-concurrent' },
      });
    const replies = await Promise.all(Array.from({ length: 10 }, send));
    const executed = replies.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
    expect(executed).toHaveLength(1);
    for (const r of replies.filter((r) => r !== executed[0])) {
      if (r.status === 409) expectError(r, 409, 'idempotency_key_in_use');
      else expect([r.status, r.headers.get('idempotent-replayed'), r.text]).toEqual([200, 'true', executed[0]?.text]);
    }
    const later = await send();
    expect([later.status, later.headers.get('idempotent-replayed'), later.text]).toEqual([
      200,
      'true',
      executed[0]?.text,
    ]);
    const otherBody = await call(stack.url, 'PATCH', '/v1/shop', {
      key,
      body: { greeting: 'Different' },
      headers: { 'idempotency-key': 'e2e-concurrent' },
    });
    expectError(otherBody, 422, 'idempotency_key_reused');
    expect((await getShop()).greeting).toBe('Only once');
  });
});
