import { listJobs } from '../../shared/domain/jobs';
import { listJobsQuery } from '../../shared/domain/jobs-schema';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageRequest } from '../../shared/http/list';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { query: listJobsQuery };

export const makeHandler = (deps: () => Pick<Deps, 'jobs'> = runtimeDeps) =>
  apiHandler('listJobs', spec, async ({ principal, query }) => {
    // The filter is part of the cursor's scope: a cursor of one filter is refused by another.
    const scope = { shopId: principal.shopId, list: `jobs?status=${query.status ?? ''}` };
    const page = await listJobs(deps(), principal.shopId, await pageRequest(query, scope), query.status);
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
