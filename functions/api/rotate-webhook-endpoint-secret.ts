import { rotateSecret } from '../../shared/domain/webhook-endpoints';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Deps = runtimeDeps) =>
  apiHandler('rotateWebhookEndpointSecret', {}, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await rotateSecret(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
