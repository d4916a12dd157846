import { updateEndpoint, type EndpointDeps } from '../../shared/domain/webhook-endpoints';
import { updateWebhookEndpointBody } from '../../shared/domain/webhook-endpoints-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { endpointDeps, endpointLifecycleDeps, urlGuardDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ body: updateWebhookEndpointBody });

export const makeHandler = (
  deps: () => Pick<EndpointDeps, 'endpoints' | 'deliveries' | 'checkUrl' | 'policy' | 'now'> = lambdaDeps(
    endpointDeps,
    urlGuardDeps,
    endpointLifecycleDeps,
  ),
) =>
  apiHandler('updateWebhookEndpoint', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await updateEndpoint(deps(), principal.shopId, pathParameters.id ?? '', body),
  }));

export const handler = makeHandler();
