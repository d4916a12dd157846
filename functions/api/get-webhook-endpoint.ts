import { getEndpoint, type EndpointPageDeps } from '../../shared/domain/endpoint-lifecycle';
import { apiHandler } from '../../shared/http/handler';
import { endpointPageDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => Pick<EndpointPageDeps, 'endpoints'> = lambdaDeps(endpointPageDeps)) =>
  apiHandler('getWebhookEndpoint', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getEndpoint(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
