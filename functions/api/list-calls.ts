import { listCalls, type CallDeps } from '../../shared/domain/calls';
import { timeFilterOf, timeScopeOf } from '../../shared/domain/pagination-schema';
import { listCallsQuery } from '../../shared/domain/calls-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { listBody, pageRequest, type CursorDeps } from '../../shared/http/list';
import { callDeps, cursorDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ query: listCallsQuery });

export const makeHandler = (deps: () => Pick<CallDeps, 'calls'> & CursorDeps = lambdaDeps(callDeps, cursorDeps)) =>
  apiHandler('listCalls', spec, async ({ principal, query }) => {
    // The filters are part of the cursor's scope: a cursor made under others is refused.
    const scope = { shopId: principal.shopId, list: `calls?${timeScopeOf(query)}` };
    const key = await deps().cursorKey();
    const page = await listCalls(deps(), principal.shopId, pageRequest(query, scope, key), timeFilterOf(query));
    return { status: 200, body: listBody(page, scope, key) };
  });

export const handler = makeHandler();
