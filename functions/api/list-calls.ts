import { listCalls } from '../../shared/domain/calls';
import { listCallsQuery } from '../../shared/domain/calls-schema';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageRequest } from '../../shared/http/list';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { query: listCallsQuery };

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('listCalls', spec, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: 'calls' };
    const page = await listCalls(deps(), principal.shopId, await pageRequest(query, scope));
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
