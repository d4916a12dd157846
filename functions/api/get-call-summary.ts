import { getSummary } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('getCallSummary', {}, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getSummary(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
