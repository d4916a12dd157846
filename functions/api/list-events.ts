import { listEvents } from '../../shared/domain/event-log';
import { listEventsQuery } from '../../shared/domain/event-log-schema';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageRequest } from '../../shared/http/list';
import { pipelineReadDeps } from '../../shared/event-log-deps';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { query: listEventsQuery };

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('listEvents', spec, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: `events?type=${query.type ?? ''}` };
    const page = await listEvents(deps(), principal.shopId, await pageRequest(query, scope), query.type);
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
