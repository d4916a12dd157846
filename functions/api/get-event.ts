import { getEvent } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { pipelineReadDeps } from '../../shared/event-log-deps';

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('getEvent', {}, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
