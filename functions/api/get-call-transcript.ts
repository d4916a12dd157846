import { getTranscript } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('getCallTranscript', {}, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getTranscript(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
