import { approveBodySchema, approveJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'jobs' | 'now'> = runtimeDeps) =>
  apiHandler('approveJob', { body: approveBodySchema }, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await approveJob(deps(), principal.shopId, pathParameters.id ?? '', body.version),
  }));

export const handler = makeHandler();
