import * as z from 'zod';
import { JOB_STATUSES, listJobs } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageQuery, pageRequest } from '../../shared/http/list';
import { runtimeDeps, type Deps } from '../../shared/runtime';

const query = z.strictObject({ ...pageQuery, status: z.enum(JOB_STATUSES).optional() });

/** The request schemas of this operation (validated here); its success response is documented in shared/openapi/responses.ts. */
export const spec = { query };

export const makeHandler = (deps: () => Pick<Deps, 'jobs'> = runtimeDeps) =>
  apiHandler('listJobs', spec, async ({ principal, query }) => {
    // The filter is part of the cursor's scope: a cursor of one filter is refused by another.
    const scope = { shopId: principal.shopId, list: `jobs?status=${query.status ?? ''}` };
    const page = await listJobs(deps(), principal.shopId, await pageRequest(query, scope), query.status);
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
