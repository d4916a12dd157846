import { rotateSecret, type EndpointDeps } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { cipherDeps, endpointDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = {};

export const makeHandler = (
  deps: () => Pick<EndpointDeps, 'endpoints' | 'cipher' | 'rotationGraceMs' | 'now'> = lambdaDeps(
    endpointDeps,
    cipherDeps,
  ),
) =>
  apiHandler('rotateWebhookEndpointSecret', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await rotateSecret(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
