import { approveBodySchema, approveJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { jobSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: approveBodySchema, response: jobSchema };

export const makeHandler = (deps: () => Pick<Deps, 'jobs' | 'now'> = runtimeDeps) =>
  apiHandler('approveJob', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await approveJob(deps(), principal.shopId, pathParameters.id ?? '', body.version),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
