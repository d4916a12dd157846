import { getCall } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { callSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: callSchema };

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('getCall', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getCall(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
