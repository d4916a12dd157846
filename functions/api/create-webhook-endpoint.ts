import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { createEndpointSchema } from '../../shared/domain/webhook-endpoint-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import type { Deps } from '../../shared/runtime';
import { secretDeps } from '../../shared/runtime-secrets';
import { webhookEndpointWithSecretSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: createEndpointSchema, response: webhookEndpointWithSecretSchema, status: 201 };

export const makeHandler = (deps: () => Deps = secretDeps) =>
  apiHandler('createWebhookEndpoint', spec, async ({ principal, body }) => ({
    status: 201,
    body: await createEndpoint(deps(), principal.shopId, body),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
