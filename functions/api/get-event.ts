import { getEvent } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { pipelineReadDeps } from '../../shared/event-log-deps';
import { eventWithDeliveriesSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: eventWithDeliveriesSchema };

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('getEvent', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
