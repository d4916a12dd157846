import * as z from 'zod';
import { listCalls } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageQuery, pageRequest } from '../../shared/http/list';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { callSchema, listOf } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { query: z.strictObject(pageQuery), response: listOf(callSchema, 'Call') };

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('listCalls', spec, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: 'calls' };
    const page = await listCalls(deps(), principal.shopId, await pageRequest(query, scope));
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
