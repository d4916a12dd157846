import { declineBodySchema, declineJob } from '../../shared/domain/jobs';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { jobSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: declineBodySchema, response: jobSchema };

export const makeHandler = (deps: () => Pick<Deps, 'jobs' | 'now'> = runtimeDeps) =>
  apiHandler('declineJob', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await declineJob(deps(), principal.shopId, pathParameters.id ?? '', body.version, body.reason),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
