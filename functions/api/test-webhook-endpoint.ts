import { sendTestEvent } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = {};

export const makeHandler = (deps: () => Pick<Deps, 'endpoints' | 'events' | 'now'> = runtimeDeps) =>
  apiHandler('testWebhookEndpoint', spec, async ({ principal, pathParameters }) => ({
    status: 202,
    body: await sendTestEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
