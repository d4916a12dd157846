import { sendTestEvent } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { eventSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: eventSchema, status: 202 };

export const makeHandler = (deps: () => Pick<Deps, 'endpoints' | 'events' | 'now'> = runtimeDeps) =>
  apiHandler('testWebhookEndpoint', spec, async ({ principal, pathParameters }) => ({
    status: 202,
    body: await sendTestEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
