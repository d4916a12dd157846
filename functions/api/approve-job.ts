import { approveJob } from '../../shared/domain/jobs';
import { approveJobBody } from '../../shared/domain/jobs-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { body: approveJobBody };

export const makeHandler = (deps: () => Pick<Deps, 'jobs' | 'now'> = runtimeDeps) =>
  apiHandler('approveJob', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await approveJob(deps(), principal.shopId, pathParameters.id ?? '', body.version),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
