import { sendTestEvent } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Deps = runtimeDeps) =>
  apiHandler('testWebhookEndpoint', {}, async ({ principal, pathParameters }) => ({
    status: 202,
    body: await sendTestEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
