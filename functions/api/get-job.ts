import { getJob, type JobDeps } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { jobDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => Pick<JobDeps, 'jobs'> = lambdaDeps(jobDeps)) =>
  apiHandler('getJob', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getJob(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
