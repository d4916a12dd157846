/**
 * What verify() and sign() take from their caller, checked so that each mistake gets its own
 * message: a body that is not the raw one, headers in any case or shape, a secret that is not
 * `whsec_<base64>`, and the `v1,` entries of `webhook-signature`.
 */
import { fromBase64 } from './base64.js';
import { WebhookVerificationError } from './webhook-error.js';

/** A `Headers`, or a plain object such as Node's `req.headers` (names in any case). */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined | null>>;

export interface Body {
  bytes: Uint8Array;
  text: () => string;
}

const SECRET_PREFIX = 'whsec_';

export function bodyBytes(raw: unknown): Body {
  if (typeof raw === 'string') return { bytes: new TextEncoder().encode(raw), text: () => raw };
  // By tag rather than instanceof: bodies may come from another realm (a worker, a vm context).
  const isBuffer = Object.prototype.toString.call(raw) === '[object ArrayBuffer]';
  const bytes = isBuffer ? new Uint8Array(raw as ArrayBuffer) : ArrayBuffer.isView(raw) ? viewBytes(raw) : undefined;
  if (bytes) return { bytes, text: () => new TextDecoder().decode(bytes) };
  const what =
    raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw === 'object' ? 'an object' : typeof raw;
  const parsed = typeof raw === 'object' && raw !== null;
  const why = parsed
    ? 'it was parsed, and serialising it again does not give back the bytes that were signed'
    : 'there is nothing to check';
  const message = `the body is ${what}, not the raw body (${why}): pass it as a string or bytes, exactly as received`;
  throw new WebhookVerificationError('body_not_raw', message);
}

function viewBytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function isHeaders(headers: HeadersLike): headers is Headers {
  return typeof (headers as Headers).get === 'function';
}

/** One header's value; repeated headers (an array) are joined as HTTP joins them, signatures by a space. */
export function headerValue(headers: HeadersLike, name: string): string | undefined {
  if (isHeaders(headers)) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined || value === null) continue;
    return typeof value === 'string' ? value : value.join(name === 'webhook-signature' ? ' ' : ', ');
  }
  return undefined;
}

/** The decoded `v1` signatures; other versions and entries that are not base64 match nothing. */
export function signatures(header: string): Uint8Array<ArrayBuffer>[] {
  const found: Uint8Array<ArrayBuffer>[] = [];
  for (const entry of header.split(/[\s]+/)) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const bytes = fromBase64(entry.slice(comma + 1));
    if (bytes) found.push(bytes);
  }
  return found;
}

export function secretKey(secret: unknown, index: number, count: number): Uint8Array<ArrayBuffer> {
  const which = count === 1 ? 'the secret' : `secret ${index + 1} of ${count}`;
  if (typeof secret !== 'string') throw new WebhookVerificationError('invalid_secret', `${which} is not a string`);
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = fromBase64(encoded);
  if (!key || key.length === 0) {
    throw new WebhookVerificationError(
      'invalid_secret',
      `${which} is not whsec_ followed by base64, as the API gives it`,
    );
  }
  return key;
}

// Named through the function, since the global CryptoKey type is DOM's and Node's types keep theirs apart.
type HmacKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

export function hmacKey(key: Uint8Array<ArrayBuffer>, use: 'sign' | 'verify'): Promise<HmacKey> {
  return globalThis.crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, [use]);
}
