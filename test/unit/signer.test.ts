import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signedHeaders } from '../../shared/delivery/signer';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

describe('webhook signatures (shared/delivery/signer.ts)', () => {
  const at = new Date();
  const body = JSON.stringify({ id: 'evt_1', type: 'job.created', data: { note: 'Müller — 5 € ✓' } });

  it('signs exactly as the Standard Webhooks library does, one v1 signature per secret', () => {
    const [a, b] = [secret(), secret()];
    const headers = signedHeaders('evt_1', body, [a, b], at);
    expect(headers['webhook-signature']).toBe(
      `${new Webhook(a).sign('evt_1', at, body)} ${new Webhook(b).sign('evt_1', at, body)}`,
    );
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
  });

  it('is verified by a receiver holding either secret, and by no other', () => {
    const [a, b] = [secret(), secret()];
    const headers = signedHeaders('evt_1', body, [a, b], at);
    expect(new Webhook(a).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(a).verify(`${body} `, headers)).toThrow();
  });

  it('refuses to sign without a secret', () => {
    expect(() => signedHeaders('evt_1', body, [], at)).toThrow('no signing secret');
    expect(() => signedHeaders('evt_1', body, ['whsec_'], at)).toThrow("Secret can't be empty.");
  });
});
