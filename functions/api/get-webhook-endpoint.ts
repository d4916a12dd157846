import { getEndpoint, type LifecycleDeps } from '../../shared/domain/endpoint-lifecycle';
import { apiHandler } from '../../shared/http/handler';
import { endpointLifecycleDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => Pick<LifecycleDeps, 'endpoints'> = lambdaDeps(endpointLifecycleDeps)) =>
  apiHandler('getWebhookEndpoint', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getEndpoint(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
