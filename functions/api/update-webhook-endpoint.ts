import { updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { updateEndpointSchema } from '../../shared/domain/webhook-endpoint-schema';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { webhookEndpointSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: updateEndpointSchema, response: webhookEndpointSchema };

export const makeHandler = (deps: () => Omit<Deps, 'cipher'> = runtimeDeps) =>
  apiHandler('updateWebhookEndpoint', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await updateEndpoint(deps(), principal.shopId, pathParameters.id ?? '', body),
  }));

export const handler = makeHandler();
