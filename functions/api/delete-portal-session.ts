import { deletePortalSession, type PortalSessionDeps } from '../../shared/domain/portal-sessions';
import { apiHandler } from '../../shared/http/handler';
import { portalSessionDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (
  deps: () => Pick<PortalSessionDeps, 'portalSessions' | 'now'> = lambdaDeps(portalSessionDeps),
) =>
  apiHandler('deletePortalSession', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await deletePortalSession(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
