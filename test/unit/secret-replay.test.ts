import { checkReplayedSecret } from '../../shared/domain/secret-replay';
import type { SecretCipher } from '../../shared/domain/secrets';
import { secretContext, type EndpointRecord, type StoredSecret } from '../../shared/domain/webhook-endpoints';
import { AppError } from '../../shared/errors';
import { HEALTHY } from '../../shared/delivery/circuit';

/** Binds the context into the "ciphertext" as the real cipher does, so a wrong context fails. */
const cipher: SecretCipher = {
  encrypt: async (plaintext, context) => `${context}|${plaintext}`,
  decrypt: async (ciphertext, context) => {
    if (!ciphertext.startsWith(`${context}|`)) throw new Error('wrong context');
    return ciphertext.slice(context.length + 1);
  },
};

const shopId = 'shop_01jd0000000000000000000000';
const id = 'we_01jd0000000000000000000000';
const at = '2026-11-21T18:04:05.123Z';
const stored = (secret: string, expiresAt: string | null = null): StoredSecret => ({
  ciphertext: `${secretContext(shopId, id)}|${secret}`,
  created_at: at,
  expires_at: expiresAt,
});

function endpointWith(secrets: StoredSecret[]): EndpointRecord {
  return {
    id,
    shop_id: shopId,
    url: 'https://hooks.partner.example/x',
    description: null,
    events: ['*'],
    filter: null,
    ordering: 'none',
    rate_limit: null,
    enabled: true,
    disabled_reason: null,
    failing_since: null,
    created_at: at,
    enabled_at: at,
    updated_at: at,
    secrets,
    secrets_version: secrets.length,
    health: HEALTHY,
    leases: {},
    lease_version: 0,
  };
}

async function verdict(
  endpoint: EndpointRecord | null,
  answer: unknown = { id, object: 'webhook_endpoint', secret: 'whsec_made' },
): Promise<string> {
  try {
    await checkReplayedSecret(
      { endpoints: { get: async (s, e) => (s === shopId && e === id ? endpoint : null) }, cipher },
      shopId,
      answer,
    );
    return 'replay';
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

describe('a replayed create and the secret it made', () => {
  it("replays while the secret is the endpoint's current one", async () => {
    expect(await verdict(endpointWith([stored('whsec_made')]))).toBe('replay');
  });

  it('refuses once the endpoint is deleted: 404 resource_missing, naming the endpoint', async () => {
    expect(await verdict(null)).toBe('resource_missing');
    await expect(
      checkReplayedSecret({ endpoints: { get: async () => null }, cipher }, shopId, { id, secret: 'whsec_made' }),
    ).rejects.toThrow(id);
  });

  it('refuses once the secret was rotated, even while it still signs during its grace: 409 invalid_state', async () => {
    expect(await verdict(endpointWith([stored('whsec_new'), stored('whsec_made', '2026-11-22T18:04:05.123Z')]))).toBe(
      'invalid_state',
    );
    expect(await verdict(endpointWith([stored('whsec_newer'), stored('whsec_new', '2026-11-22T18:04:05.123Z')]))).toBe(
      'invalid_state',
    );
  });

  it('is a bug, not a replay, when the stored answer carries no secret to check', async () => {
    await expect(verdict(endpointWith([stored('whsec_made')]), { id, object: 'webhook_endpoint' })).rejects.toThrow(
      'without an endpoint id and secret',
    );
  });
});
