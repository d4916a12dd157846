import { createHash, createSecretKey, type KeyObject } from 'node:crypto';

/**
 * HMAC-SHA256 with its keys made into KeyObjects once. node:crypto turns a Buffer key into a
 * KeyObject on every `createHmac`, which on Node 24 costs about three times the HMAC of a
 * webhook body (39 µs against 10 µs here); the webhook signer uses the same few keys (a
 * container's endpoints' secrets) for every request.
 */

const MAX_KEYS = 64;
/**
 * The keys made, least recently used first, each under a SHA-256 of its bytes: looked up by
 * content (an array changed after use can never map to its old key) and never by the secret
 * itself. Few keys are live in a container (its endpoints' webhook secrets); at most 64 are
 * kept, the least recently used going first.
 */
const made = new Map<string, KeyObject>();

/** The KeyObject for these key bytes (copied: the caller may reuse its buffer). */
export function hmacKey(bytes: Buffer): KeyObject {
  const id = createHash('sha256').update(bytes).digest('base64');
  let key = made.get(id);
  if (key) made.delete(id);
  else key = createSecretKey(Buffer.from(bytes));
  made.set(id, key);
  if (made.size > MAX_KEYS) made.delete(made.keys().next().value as string);
  return key;
}
