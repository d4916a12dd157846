import { getEvent, type EventLogDeps } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { eventPageDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => EventLogDeps = lambdaDeps(eventPageDeps)) =>
  apiHandler('getEvent', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getEvent(deps(), principal.shopId, pathParameters.id ?? ''),
  }));

export const handler = makeHandler();
