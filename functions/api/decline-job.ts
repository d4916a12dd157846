import { declineJob } from '../../shared/domain/jobs';
import { declineJobBody } from '../../shared/domain/jobs-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { body: declineJobBody };

export const makeHandler = (deps: () => Pick<Deps, 'jobs' | 'now'> = runtimeDeps) =>
  apiHandler('declineJob', spec, async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await declineJob(deps(), principal.shopId, pathParameters.id ?? '', body.version, body.reason),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
