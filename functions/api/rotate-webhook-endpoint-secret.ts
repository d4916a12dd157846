import { checkReplayedSecret } from '../../shared/domain/secret-replay';
import { rotateSecret, type EndpointDeps } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { idempotent, type IdempotencyDeps } from '../../shared/http/idempotency';
import { cipherDeps, endpointDeps, idempotencyDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (
  deps: () => Pick<EndpointDeps, 'endpoints' | 'cipher' | 'rotationGraceMs' | 'now'> & IdempotencyDeps = lambdaDeps(
    endpointDeps,
    cipherDeps,
    idempotencyDeps,
  ),
) =>
  apiHandler(
    'rotateWebhookEndpointSecret',
    spec,
    async ({ principal, pathParameters }) => ({
      status: 200,
      body: await rotateSecret(deps(), principal.shopId, pathParameters.id ?? ''),
    }),
    {
      // A replay hands out the secret this rotation made while it is still the current one.
      idempotency: idempotent(
        () => deps().idempotency,
        (stored, principal) => checkReplayedSecret(deps(), principal.shopId, stored),
      ),
    },
  );

export const handler = makeHandler();
