import { getSummary } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { callSummarySchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: callSummarySchema };

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('getCallSummary', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getSummary(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
