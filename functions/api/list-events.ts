import * as z from 'zod';
import { eventTypeFilter, listEvents } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageQuery, pageRequest } from '../../shared/http/list';
import { pipelineReadDeps } from '../../shared/event-log-deps';
import { eventSchema, listOf } from '../../shared/openapi/resources';

const query = z.strictObject({ ...pageQuery, type: eventTypeFilter });

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { query, response: listOf(eventSchema, 'Event') };

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('listEvents', spec, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: `events?type=${query.type ?? ''}` };
    const page = await listEvents(deps(), principal.shopId, await pageRequest(query, scope), query.type);
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
