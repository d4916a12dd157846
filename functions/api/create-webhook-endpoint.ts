import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { createEndpointSchema } from '../../shared/domain/webhook-endpoint-schema';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Deps = runtimeDeps) =>
  apiHandler('createWebhookEndpoint', { body: createEndpointSchema }, async ({ principal, body }) => ({
    status: 201,
    body: await createEndpoint(deps(), principal.shopId, body),
  }));

export const handler = makeHandler();
