import { checkReplayedSession, createPortalSession, type PortalSessionDeps } from '../../shared/domain/portal-sessions';
import { createPortalSessionBody } from '../../shared/domain/portal-sessions-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent, type IdempotencyDeps } from '../../shared/http/idempotency';
import { requestSchemas } from '../../shared/http/validation';
import { idempotencyDeps, portalSessionDeps, shopDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ body: createPortalSessionBody });

export const makeHandler = (
  deps: () => PortalSessionDeps & IdempotencyDeps = lambdaDeps(portalSessionDeps, shopDeps, idempotencyDeps),
) =>
  apiHandler(
    'createPortalSession',
    spec,
    async ({ principal, body, baseUrl }) => ({
      status: 201,
      body: await createPortalSession(
        deps(),
        { shopId: principal.shopId, mode: principal.mode, key: { id: principal.keyId, hash: principal.keyHash } },
        body,
        baseUrl,
      ),
    }),
    {
      idempotency: idempotent(
        () => deps().idempotency,
        (stored, principal) => checkReplayedSession(deps(), principal.shopId, stored),
      ),
    },
  );

export const handler = makeHandler();
