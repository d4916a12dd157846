import { redeliver } from '../../shared/domain/deliveries';
import { redeliverBodySchema } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { pipelineReadDeps } from '../../shared/event-log-deps';

/** Writes new delivery rows only; the table stream puts them on the queue (202). */
export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('redeliverEvent', { body: redeliverBodySchema }, async ({ principal, pathParameters, body }) => ({
    status: 202,
    body: await redeliver(deps(), principal.shopId, pathParameters.id ?? '', body.endpoint_ids),
  }));

export const handler = makeHandler();
