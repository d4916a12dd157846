import { updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { updateWebhookEndpointBody } from '../../shared/domain/webhook-endpoints-schema';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { body: updateWebhookEndpointBody };

export const makeHandler = (deps: () => Omit<Deps, 'cipher'> = runtimeDeps) =>
  apiHandler('updateWebhookEndpoint', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await updateEndpoint(deps(), principal.shopId, pathParameters.id ?? '', body),
  }));

export const handler = makeHandler();
