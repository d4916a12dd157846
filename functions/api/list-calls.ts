import { z } from 'zod';
import { listCalls } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageQuery, pageRequest } from '../../shared/http/list';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('listCalls', { query: z.strictObject(pageQuery) }, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: 'calls' };
    const page = await listCalls(deps(), principal.shopId, pageRequest(query, scope));
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
