import { listEvents, type EventLogDeps } from '../../shared/domain/event-log';
import { timeFilterOf, timeScopeOf } from '../../shared/domain/pagination-schema';
import { listEventsQuery } from '../../shared/domain/event-log-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { listBody, pageRequest, type CursorDeps } from '../../shared/http/list';
import { cursorDeps, eventPageDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ query: listEventsQuery });

export const makeHandler = (deps: () => EventLogDeps & CursorDeps = lambdaDeps(eventPageDeps, cursorDeps)) =>
  apiHandler('listEvents', spec, async ({ principal, query }) => {
    // The filters are part of the cursor's scope: a cursor made under others is refused.
    const scope = { shopId: principal.shopId, list: `events?type=${query.type ?? ''}&${timeScopeOf(query)}` };
    const key = await deps().cursorKey();
    const page = await listEvents(deps(), principal.shopId, pageRequest(query, scope, key), {
      type: query.type,
      time: timeFilterOf(query),
    });
    return { status: 200, body: listBody(page, scope, key) };
  });

export const handler = makeHandler();
