import { getJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { jobSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: jobSchema };

export const makeHandler = (deps: () => Pick<Deps, 'jobs'> = runtimeDeps) =>
  apiHandler('getJob', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getJob(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
