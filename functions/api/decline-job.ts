import { declineBodySchema, declineJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'jobs' | 'now'> = runtimeDeps) =>
  apiHandler('declineJob', { body: declineBodySchema }, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await declineJob(deps(), principal.shopId, pathParameters.id ?? '', body.version, body.reason),
  }));

export const handler = makeHandler();
