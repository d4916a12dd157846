import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { createWebhookEndpointBody } from '../../shared/domain/webhook-endpoints-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import type { Deps } from '../../shared/runtime';
import { secretDeps } from '../../shared/runtime-secrets';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { body: createWebhookEndpointBody };

export const makeHandler = (deps: () => Deps = secretDeps) =>
  apiHandler('createWebhookEndpoint', spec, async ({ principal, body }) => ({
    status: 201,
    body: await createEndpoint(deps(), principal.shopId, body),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
