import { getJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = {};

export const makeHandler = (deps: () => Pick<Deps, 'jobs'> = runtimeDeps) =>
  apiHandler('getJob', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getJob(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
