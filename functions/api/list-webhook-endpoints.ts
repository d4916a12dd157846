import { listEndpoints, type EndpointDeps } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { endpointDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => Pick<EndpointDeps, 'endpoints'> = lambdaDeps(endpointDeps)) =>
  apiHandler('listWebhookEndpoints', spec, async ({ principal }) => {
    const { items } = await listEndpoints(deps(), principal.shopId);
    // At most 16 per shop: always one page, in the same envelope as every list.
    return { status: 200, body: { object: 'list', data: items, has_more: false, next_cursor: null } };
  });

export const handler = makeHandler();
