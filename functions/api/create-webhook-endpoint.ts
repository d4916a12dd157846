import { checkReplayedSecret } from '../../shared/domain/secret-replay';
import { createEndpoint, type EndpointDeps } from '../../shared/domain/webhook-endpoints';
import { createWebhookEndpointBody } from '../../shared/domain/webhook-endpoints-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { idempotent, type IdempotencyDeps } from '../../shared/http/idempotency';
import { cipherDeps, endpointDeps, idempotencyDeps, urlGuardDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ body: createWebhookEndpointBody });

export const makeHandler = (
  deps: () => Omit<EndpointDeps, 'events' | 'deliveries' | 'rotationGraceMs'> & IdempotencyDeps = lambdaDeps(
    endpointDeps,
    urlGuardDeps,
    cipherDeps,
    idempotencyDeps,
  ),
) =>
  apiHandler(
    'createWebhookEndpoint',
    spec,
    async ({ principal, body, writeToken }) => ({
      status: 201,
      body: await createEndpoint(deps(), principal.shopId, body, { writeToken }),
    }),
    {
      idempotency: idempotent(
        () => deps().idempotency,
        (stored, principal) => checkReplayedSecret(deps(), principal.shopId, stored),
      ),
    },
  );

export const handler = makeHandler();
