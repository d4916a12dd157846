import { rotateSecret } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import type { Deps } from '../../shared/runtime';
import { secretDeps } from '../../shared/runtime-secrets';
import { webhookEndpointWithSecretSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: webhookEndpointWithSecretSchema };

export const makeHandler = (deps: () => Deps = secretDeps) =>
  apiHandler('rotateWebhookEndpointSecret', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await rotateSecret(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
