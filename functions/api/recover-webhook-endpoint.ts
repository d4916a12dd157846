import { recoverWebhookEndpointBody } from '../../shared/domain/recovery-schema';
import { recoverEndpoint, type RecoveryDeps } from '../../shared/delivery/recovery';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { idempotent, type IdempotencyDeps } from '../../shared/http/idempotency';
import { idempotencyDeps, recoveryDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 * It writes the window's first page of delivery rows and the recovery that carries the rest; the
 * table stream puts the rows on the queue and has the fan-out work the later pages (202).
 */
export const spec = requestSchemas({ body: recoverWebhookEndpointBody });

export const makeHandler = (deps: () => RecoveryDeps & IdempotencyDeps = lambdaDeps(recoveryDeps, idempotencyDeps)) =>
  apiHandler(
    'recoverWebhookEndpoint',
    spec,
    async ({ principal, pathParameters, body }) => ({
      status: 202,
      body: await recoverEndpoint(deps(), principal.shopId, pathParameters.id ?? '', body),
    }),
    { idempotency: idempotent(() => deps().idempotency) },
  );

export const handler = makeHandler();
