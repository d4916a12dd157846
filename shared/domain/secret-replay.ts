import { AppError } from '../errors';
import type { SecretCipher } from './secrets';
import { secretContext, secretNotShownAgain, type EndpointStore } from './webhook-endpoints';

interface CreatedAnswer {
  id: string;
  secret: string;
}

const isCreatedAnswer = (body: unknown): body is CreatedAnswer =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as CreatedAnswer).id === 'string' &&
  typeof (body as CreatedAnswer).secret === 'string';

/**
 * Whether a replayed create or rotate may hand out the signing secret it made. Only while that
 * secret is still the endpoint's current one: after a DELETE the secret is destroyed, after a
 * rotation it is on its way out, and a client that took it from a replay would verify with a
 * secret about to die.
 * Throws the contract error to answer instead; the record stays, so a retry answers the same.
 */
export async function checkReplayedSecret(
  deps: { endpoints: Pick<EndpointStore, 'get'>; cipher: SecretCipher },
  shopId: string,
  body: unknown,
): Promise<void> {
  if (!isCreatedAnswer(body)) throw new Error('a stored create answer without an endpoint id and secret');
  const endpoint = await deps.endpoints.get(shopId, body.id);
  if (!endpoint) {
    throw new AppError(
      'resource_missing',
      `The webhook endpoint this Idempotency-Key created ('${body.id}') has been deleted, and ` +
        `its secret with it. To create another, use a new Idempotency-Key.`,
    );
  }
  const current = endpoint.secrets.find((s) => s.expires_at === null);
  const inForce =
    current !== undefined &&
    (await deps.cipher.decrypt(current.ciphertext, secretContext(shopId, endpoint.id), shopId)) === body.secret;
  if (!inForce) {
    throw secretNotShownAgain(body.id);
  }
}
