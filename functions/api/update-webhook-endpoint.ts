import { updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { updateEndpointSchema } from '../../shared/domain/webhook-endpoint-schema';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Deps = runtimeDeps) =>
  apiHandler('updateWebhookEndpoint', { body: updateEndpointSchema }, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await updateEndpoint(deps(), principal.shopId, pathParameters.id ?? '', body),
  }));

export const handler = makeHandler();
