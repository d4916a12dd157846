import { listJobs, type JobDeps } from '../../shared/domain/jobs';
import { timeFilterOf, timeScopeOf } from '../../shared/domain/pagination-schema';
import { listJobsQuery } from '../../shared/domain/jobs-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { listBody, pageRequest, type CursorDeps } from '../../shared/http/list';
import { cursorDeps, jobDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ query: listJobsQuery });

export const makeHandler = (deps: () => Pick<JobDeps, 'jobs'> & CursorDeps = lambdaDeps(jobDeps, cursorDeps)) =>
  apiHandler('listJobs', spec, async ({ principal, query }) => {
    // The filter is part of the cursor's scope: a cursor of one filter is refused by another.
    const scope = { shopId: principal.shopId, list: `jobs?status=${query.status ?? ''}&${timeScopeOf(query)}` };
    const key = await deps().cursorKey();
    const page = await listJobs(deps(), principal.shopId, pageRequest(query, scope, key), {
      status: query.status,
      time: timeFilterOf(query),
    });
    return { status: 200, body: listBody(page, scope, key) };
  });

export const handler = makeHandler();
