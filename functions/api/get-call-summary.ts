import { getSummary, type CallDeps } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { callDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => Pick<CallDeps, 'calls'> = lambdaDeps(callDeps)) =>
  apiHandler('getCallSummary', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getSummary(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
