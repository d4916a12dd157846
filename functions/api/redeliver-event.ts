import { redeliver } from '../../shared/domain/deliveries';
import { redeliverBodySchema } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { pipelineReadDeps } from '../../shared/event-log-deps';

/** Writes new delivery rows only; the table stream puts them on the queue (202). */
/** The request schemas of this operation (validated here); its success response is documented in shared/openapi/responses.ts. */
export const spec = { body: redeliverBodySchema };

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('redeliverEvent', spec, async ({ principal, pathParameters, body }) => ({
    status: 202,
    body: await redeliver(deps(), principal.shopId, pathParameters.id ?? '', body.endpoint_ids),
  }));

export const handler = makeHandler();
