import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { createEndpointSchema } from '../../shared/domain/webhook-endpoint-schema';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { webhookEndpointWithSecretSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: createEndpointSchema, response: webhookEndpointWithSecretSchema, status: 201 };

export const makeHandler = (deps: () => Deps = runtimeDeps) =>
  apiHandler('createWebhookEndpoint', spec, async ({ principal, body }) => ({
    status: 201,
    body: await createEndpoint(deps(), principal.shopId, body),
  }));

export const handler = makeHandler();
