import { getJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'jobs'> = runtimeDeps) =>
  apiHandler('getJob', {}, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getJob(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
