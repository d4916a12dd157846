import { getTranscript } from '../../shared/domain/calls';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { transcriptSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: transcriptSchema };

export const makeHandler = (deps: () => Pick<Deps, 'calls'> = runtimeDeps) =>
  apiHandler('getCallTranscript', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getTranscript(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
