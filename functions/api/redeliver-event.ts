import { redeliver, type RedeliverDeps } from '../../shared/delivery/redeliver';
import { redeliverEventBody } from '../../shared/domain/deliveries-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { eventLogDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/** Writes new delivery rows only; the table stream puts them on the queue (202). */
/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ body: redeliverEventBody });

export const makeHandler = (deps: () => RedeliverDeps = lambdaDeps(eventLogDeps)) =>
  apiHandler('redeliverEvent', spec, async ({ principal, pathParameters, body }) => ({
    status: 202,
    body: await redeliver(deps(), principal.shopId, pathParameters.id ?? '', body.endpoint_ids),
  }));

export const handler = makeHandler();
