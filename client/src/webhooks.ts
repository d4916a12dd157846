/**
 * Standard Webhooks verification and signing with Web Crypto, so receivers on Node 20+, in
 * browsers, workers and edge runtimes share one implementation: HMAC-SHA256 over
 * `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the base64 part of `whsec_…`, each
 * signature `v1,<base64>` in a space-separated `webhook-signature` (docs/api.md, Verifying).
 * `crypto.subtle.verify` compares in constant time.
 */
import { bodyBytes, headerValue, type HeadersLike, hmacKey, secretKey, signatures } from './webhook-input.js';
import { WebhookVerificationError } from './webhook-error.js';
import type { WebhookEvent } from './types.js';
import { toBase64 } from './base64.js';

export { WebhookVerificationError, type WebhookVerificationReason } from './webhook-error.js';
export type { HeadersLike } from './webhook-input.js';

/** Timestamps further than this from now are refused, which stops replays of an old delivery. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** The present, for tests; defaults to the clock. */
  now?: Date;
}

export interface SignInput {
  id: string;
  /** A Date, or unix seconds; defaults to now. */
  timestamp?: Date | number;
  body: string | Uint8Array;
  /** Several secrets give several signatures, as deliveries carry during a rotation. */
  secret: string | readonly string[];
}

// A type alias, not an interface, so that it passes where a plain headers record is expected (verify, fetch).
export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

const encoder = new TextEncoder();

function signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}

/**
 * Checks a delivery and returns its event, typed by `type`. Pass the raw body exactly as received
 * (a string or bytes), the request's headers (a plain object in any case, or a `Headers`), and the
 * endpoint's secret, or its secrets while you switch after a rotation. Throws a
 * WebhookVerificationError whose `reason` and message say what is wrong.
 */
export async function verify(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeadersLike,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const body = bodyBytes(rawBody);
  const id = headerValue(headers, 'webhook-id');
  const timestamp = headerValue(headers, 'webhook-timestamp');
  const signature = headerValue(headers, 'webhook-signature');
  const missing = Object.entries({ 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature })
    .filter(([, value]) => value === undefined || value.trim() === '')
    .map(([name]) => name);
  if (missing.length > 0 || id === undefined || timestamp === undefined || signature === undefined) {
    const list = missing.join(', ');
    const hint = missing.length === 3 ? ': are these the headers of the webhook request?' : '';
    throw new WebhookVerificationError(
      'missing_header',
      `missing header${missing.length > 1 ? 's' : ''} ${list}${hint}`,
    );
  }
  checkTimestamp(timestamp, options);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new WebhookVerificationError('invalid_secret', 'no secret given to verify with');
  const keys = await Promise.all(secrets.map((one, index) => hmacKey(secretKey(one, index, secrets.length), 'verify')));
  const candidates = signatures(signature);
  if (candidates.length === 0) {
    throw new WebhookVerificationError('no_matching_signature', 'webhook-signature holds no v1 signature');
  }
  const content = signedContent(id.trim(), timestamp.trim(), body.bytes);
  for (const key of keys) {
    for (const candidate of candidates) {
      if (await globalThis.crypto.subtle.verify('HMAC', key, candidate, content)) return parseEvent(body.text());
    }
  }
  throw new WebhookVerificationError(
    'no_matching_signature',
    noMatchMessage(candidates.length, keys.length, body.text()),
  );
}

function checkTimestamp(header: string, options: VerifyOptions): void {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!/^\d+$/.test(header.trim())) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      `webhook-timestamp ${JSON.stringify(header)} is not unix seconds`,
    );
  }
  const now = Math.floor((options.now?.getTime() ?? Date.now()) / 1000);
  const age = now - Number(header.trim());
  if (age > tolerance) {
    const why = 'a replayed delivery, or this clock is off';
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `webhook-timestamp is ${age} s old, ${beyond(tolerance)}: ${why}`,
    );
  }
  if (-age > tolerance) {
    const message = `webhook-timestamp is ${-age} s in the future, ${beyond(tolerance)}: is this clock right?`;
    throw new WebhookVerificationError('timestamp_too_new', message);
  }
}

const beyond = (tolerance: number): string => `beyond the ${tolerance} s tolerance`;

function noMatchMessage(signatureCount: number, secretCount: number, text: string): string {
  const counted = `none of the ${signatureCount} v1 signature(s) matches the ${secretCount} secret(s)`;
  const base = `${counted}: is the secret this endpoint's (whsec_…, and the new one after a rotation)?`;
  // A body that is exactly what JSON.stringify makes may be one a framework parsed and serialised again.
  const hint = ' If a framework parsed this body and serialised it again, pass the raw body instead.';
  return looksReserialised(text) ? base + hint : base;
}

function looksReserialised(text: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === text;
  } catch {
    return false;
  }
}

function parseEvent(text: string): WebhookEvent {
  try {
    return JSON.parse(text) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the signature matches but the body is not JSON');
  }
}

/** The three headers of a delivery of `body`, for a receiver's own tests. */
export async function sign(input: SignInput): Promise<SignedHeaders> {
  const at = input.timestamp ?? new Date();
  const seconds = String(typeof at === 'number' ? Math.floor(at) : Math.floor(at.getTime() / 1000));
  const secrets = typeof input.secret === 'string' ? [input.secret] : [...input.secret];
  const content = signedContent(input.id, seconds, bodyBytes(input.body).bytes);
  const signed = await Promise.all(
    secrets.map(async (secret, index) => {
      const key = await hmacKey(secretKey(secret, index, secrets.length), 'sign');
      return `v1,${toBase64(new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, content)))}`;
    }),
  );
  return { 'webhook-id': input.id, 'webhook-timestamp': seconds, 'webhook-signature': signed.join(' ') };
}

/** What `client.webhooks` is, usable without a client (a receiver needs no API key). */
export const webhooks = { verify, sign };
