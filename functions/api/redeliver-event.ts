import { redeliver } from '../../shared/domain/deliveries';
import { redeliverBodySchema } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { pipelineReadDeps } from '../../shared/event-log-deps';
import { eventWithDeliveriesSchema } from '../../shared/openapi/resources';

/** Writes new delivery rows only; the table stream puts them on the queue (202). */
/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: redeliverBodySchema, response: eventWithDeliveriesSchema, status: 202 };

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('redeliverEvent', spec, async ({ principal, pathParameters, body }) => ({
    status: 202,
    body: await redeliver(deps(), principal.shopId, pathParameters.id ?? '', body.endpoint_ids),
  }));

export const handler = makeHandler();
