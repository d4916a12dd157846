import { declineJob, type JobDeps } from '../../shared/domain/jobs';
import { declineJobBody } from '../../shared/domain/jobs-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { idempotent, type IdempotencyDeps } from '../../shared/http/idempotency';
import { idempotencyDeps, jobDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ body: declineJobBody });

export const makeHandler = (deps: () => JobDeps & IdempotencyDeps = lambdaDeps(jobDeps, idempotencyDeps)) =>
  apiHandler(
    'declineJob',
    spec,
    async ({ principal, pathParameters, body, writeToken }) => ({
      status: 200,
      body: await declineJob(deps(), principal.shopId, pathParameters.id ?? '', body, { writeToken }),
    }),
    { idempotency: idempotent(() => deps().idempotency) },
  );

export const handler = makeHandler();
