import { createHmac } from 'node:crypto';
import { hmacKey } from '../hmac-keys';

export const USER_AGENT = 'ShopCalls-Webhooks/1.0';

/**
 * A `whsec_` secret's key bytes, as the Standard Webhooks libraries read it, made into a key
 * once per secret (shared/hmac-keys.ts). Signing is
 * node:crypto's HMAC-SHA256, which the runtime has built in: the `standardwebhooks` package
 * would bundle its own JavaScript SHA-256 and base64 into the consumer (receivers and tests
 * verify with it).
 */
function keyOf(secret: string) {
  const bytes = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (bytes.length === 0) throw new Error("Secret can't be empty.");
  return hmacKey(bytes);
}

/**
 * Standard Webhooks headers for one attempt. The timestamp is this attempt's (receivers
 * refuse signatures older than 5 minutes, so retries are re-signed); during a rotation
 * grace there is one `v1,` signature per valid secret, space separated.
 */
export function signedHeaders(eventId: string, body: string, secrets: string[], at: Date): Record<string, string> {
  if (secrets.length === 0) throw new Error('no signing secret');
  const timestamp = Math.floor(at.getTime() / 1000);
  const signatures = secrets.map(
    (secret) => `v1,${createHmac('sha256', keyOf(secret)).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`,
  );
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}
