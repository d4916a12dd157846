import { listPortalSessions, type PortalSessionDeps } from '../../shared/domain/portal-sessions';
import { listPortalSessionsQuery } from '../../shared/domain/portal-sessions-schema';
import type { ApiKeyStore } from '../../shared/domain/api-keys';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageRequest, type CursorDeps } from '../../shared/http/list';
import { requestSchemas } from '../../shared/http/validation';
import { apiKeyDeps, cursorDeps, portalSessionDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ query: listPortalSessionsQuery });

type Deps = Pick<PortalSessionDeps, 'portalSessions' | 'now'> & { apiKeys: ApiKeyStore } & CursorDeps;

export const makeHandler = (deps: () => Deps = lambdaDeps(portalSessionDeps, apiKeyDeps, cursorDeps)) =>
  apiHandler('listPortalSessions', spec, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: 'portal-sessions' };
    const key = await deps().cursorKey();
    const page = await listPortalSessions(deps(), principal.shopId, pageRequest(query, scope, key));
    return { status: 200, body: listBody(page, scope, key) };
  });

export const handler = makeHandler();
