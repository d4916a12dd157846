import { Webhook } from 'standardwebhooks';
import { ShopCalls, sign, verify, type WebhookEvent, WebhookVerificationError, webhooks } from '../src';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const otherSecret = 'whsec_' + btoa('another secret of thirty-two b!!');
const event = {
  id: 'evt_01jd0000000000000000000000',
  object: 'event',
  type: 'job.created',
  timestamp: '2026-11-21T18:04:05.123Z',
  data: { id: 'job_01jd0000000000000000000000', object: 'job', version: 1, status: 'pending' },
};
const body = JSON.stringify(event);
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function signed(overrides: { body?: string; timestamp?: number; secret?: string | string[] } = {}) {
  return sign({
    id: event.id,
    body: overrides.body ?? body,
    secret: overrides.secret ?? secret,
    timestamp: overrides.timestamp,
  });
}

async function reasonOf(run: () => Promise<unknown>): Promise<{ reason: string; message: string }> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WebhookVerificationError))
    throw new Error(`expected a WebhookVerificationError, got ${String(error)}`);
  return { reason: error.reason, message: error.message };
}

describe('cross-checked with the standardwebhooks package', () => {
  it('signs what standardwebhooks verifies', async () => {
    const headers = await signed();
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(event);
  });

  it('verifies what standardwebhooks signs, returning the event narrowed by type', async () => {
    const at = new Date();
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(event.id, at, body),
    };
    const verified: WebhookEvent = await verify(body, headers, secret);
    expect(verified).toEqual(event);
    // Narrowing by `type` gives `data` its type: the job here (a compile-time check as much as a runtime one).
    expect(verified.type === 'job.created' ? verified.data.version : undefined).toBe(1);
  });

  it('agrees with standardwebhooks on a tampered body: both refuse it', async () => {
    const headers = await signed();
    const tampered = body.replace('"version":1', '"version":2');
    expect(() => new Webhook(secret).verify(tampered, { ...headers })).toThrow();
    expect((await reasonOf(() => verify(tampered, headers, secret))).reason).toBe('no_matching_signature');
  });
});

describe('verify', () => {
  it('takes bytes and any header shape: a Headers, names in any case, repeated values', async () => {
    const headers = await signed();
    const bytes = new TextEncoder().encode(body);
    await expect(verify(bytes, new Headers({ ...headers }), secret)).resolves.toEqual(event);
    await expect(verify(Buffer.from(body), headers, secret)).resolves.toEqual(event);
    await expect(verify(bytes.buffer, headers, secret)).resolves.toEqual(event);
    const shouty = {
      'Webhook-Id': headers['webhook-id'],
      'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
      'Webhook-Signature': ['v2,bm90IHRoaXMgb25l', headers['webhook-signature']],
    };
    await expect(verify(body, shouty, secret)).resolves.toEqual(event);
  });

  it('accepts any live secret during a rotation, and a header with one signature per secret', async () => {
    const headers = await signed({ secret: [otherSecret, secret] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    await expect(verify(body, headers, secret)).resolves.toEqual(event);
    await expect(verify(body, headers, otherSecret)).resolves.toEqual(event);
    const onlyNew = await signed({ secret });
    await expect(verify(body, onlyNew, [otherSecret, secret])).resolves.toEqual(event);
    expect(new Webhook(otherSecret).verify(body, { ...headers })).toEqual(event);
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('names a missing %s', async (name) => {
    const headers: Record<string, string> = { ...(await signed()) };
    delete headers[name];
    expect(await reasonOf(() => verify(body, headers, secret))).toEqual({
      reason: 'missing_header',
      message: `missing header ${name}`,
    });
  });

  it('asks whether these are the request’s headers when all three are missing', async () => {
    const { reason, message } = await reasonOf(() => verify(body, { 'content-type': 'application/json' }, secret));
    expect(reason).toBe('missing_header');
    expect(message).toBe(
      'missing headers webhook-id, webhook-timestamp, webhook-signature: are these the headers of the webhook request?',
    );
  });

  it('says by how much a timestamp is stale, or in the future', async () => {
    const old = await reasonOf(async () => verify(body, await signed({ timestamp: nowSeconds() - 600 }), secret));
    expect(old.reason).toBe('timestamp_too_old');
    expect(old.message).toMatch(/^webhook-timestamp is 60[01] s old, beyond the 300 s tolerance/);
    const ahead = await reasonOf(async () => verify(body, await signed({ timestamp: nowSeconds() + 400 }), secret));
    expect(ahead.reason).toBe('timestamp_too_new');
    expect(ahead.message).toMatch(/^webhook-timestamp is (399|400) s in the future, beyond the 300 s tolerance/);
    const fixedNow = new Date(Date.UTC(2026, 10, 21, 18, 4, 5));
    const atThatTime = await signed({ timestamp: fixedNow.getTime() / 1000 - 299 });
    await expect(verify(body, atThatTime, secret, { now: fixedNow })).resolves.toEqual(event);
  });

  it('refuses a timestamp that is not unix seconds', async () => {
    const headers = { ...(await signed()), 'webhook-timestamp': '2026-11-21T18:04:05Z' };
    expect(await reasonOf(() => verify(body, headers, secret))).toEqual({
      reason: 'invalid_timestamp',
      message: 'webhook-timestamp "2026-11-21T18:04:05Z" is not unix seconds',
    });
  });

  it('says no signature matches, hinting at re-serialising only for a body JSON.stringify could make', async () => {
    const wrongSecret = await reasonOf(async () => verify(body, await signed(), otherSecret));
    expect(wrongSecret.reason).toBe('no_matching_signature');
    expect(wrongSecret.message).toMatch(/^none of the 1 v1 signature\(s\) matches the 1 secret\(s\): is the secret/);
    expect(wrongSecret.message).toContain('If a framework parsed this body and serialised it again, pass the raw body');
    const pretty = JSON.stringify(event, null, 2);
    const prettyWrong = await reasonOf(async () => verify(pretty, await signed({ body: pretty }), otherSecret));
    expect(prettyWrong.reason).toBe('no_matching_signature');
    expect(prettyWrong.message).not.toContain('parsed');
  });

  it('says when the header holds no v1 signature at all', async () => {
    const headers = { ...(await signed()), 'webhook-signature': 'v2,abc v1a,def' };
    expect(await reasonOf(() => verify(body, headers, secret))).toEqual({
      reason: 'no_matching_signature',
      message: 'webhook-signature holds no v1 signature',
    });
  });

  it('says a parsed body is not the raw body', async () => {
    const headers = await signed();
    const asObject = await reasonOf(() => verify(event as never, headers, secret));
    expect(asObject.reason).toBe('body_not_raw');
    expect(asObject.message).toBe(
      'the body is an object, not the raw body (it was parsed, and serialising it again does not give back the bytes ' +
        'that were signed): pass it as a string or bytes, exactly as received',
    );
    const missing = await reasonOf(() => verify(undefined as never, headers, secret));
    expect(missing.message).toMatch(/^the body is undefined, not the raw body \(there is nothing to check\)/);
  });

  it('says a secret is not a whsec_ secret', async () => {
    const headers = await signed();
    expect(await reasonOf(() => verify(body, headers, 'whsec_not*base64'))).toEqual({
      reason: 'invalid_secret',
      message: 'the secret is not whsec_ followed by base64, as the API gives it',
    });
    expect((await reasonOf(() => verify(body, headers, [secret, '']))).message).toBe(
      'secret 2 of 2 is not whsec_ followed by base64, as the API gives it',
    );
    expect((await reasonOf(() => verify(body, headers, []))).reason).toBe('invalid_secret');
  });

  it('says when a signed body is not JSON', async () => {
    const text = 'not json';
    expect((await reasonOf(async () => verify(text, await signed({ body: text }), secret))).reason).toBe(
      'invalid_payload',
    );
  });

  it('is reachable from a client and on its own', () => {
    const client = new ShopCalls({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:1' });
    expect(client.webhooks).toBe(webhooks);
    expect(webhooks.verify).toBe(verify);
  });
});
