import { rotateSecret } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import type { Deps } from '../../shared/runtime';
import { secretDeps } from '../../shared/runtime-secrets';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = {};

export const makeHandler = (deps: () => Deps = secretDeps) =>
  apiHandler('rotateWebhookEndpointSecret', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await rotateSecret(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
