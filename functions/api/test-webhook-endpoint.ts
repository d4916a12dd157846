import { sendTestEvent, type EndpointDeps } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { endpointDeps, eventWriterDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (
  deps: () => Pick<EndpointDeps, 'endpoints' | 'events' | 'now'> = lambdaDeps(endpointDeps, eventWriterDeps),
) =>
  apiHandler('testWebhookEndpoint', spec, async ({ principal, pathParameters }) => ({
    status: 202,
    body: await sendTestEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
