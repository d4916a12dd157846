import { Webhook } from 'standardwebhooks';

export const USER_AGENT = 'ShopCalls-Webhooks/1.0';

/**
 * Standard Webhooks headers for one attempt. The timestamp is this attempt's (receivers
 * refuse signatures older than 5 minutes, so retries are re-signed); during a rotation
 * grace there is one `v1,` signature per valid secret, space separated.
 */
export function signedHeaders(eventId: string, body: string, secrets: string[], at: Date): Record<string, string> {
  if (secrets.length === 0) throw new Error('no signing secret');
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
