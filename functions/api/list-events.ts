import { z } from 'zod';
import { eventTypeFilter, listEvents } from '../../shared/domain/event-log';
import { apiHandler } from '../../shared/http/handler';
import { listBody, pageQuery, pageRequest } from '../../shared/http/list';
import { pipelineReadDeps } from '../../shared/event-log-deps';

const query = z.strictObject({ ...pageQuery, type: eventTypeFilter });

export const makeHandler = (deps = pipelineReadDeps) =>
  apiHandler('listEvents', { query }, async ({ principal, query }) => {
    const scope = { shopId: principal.shopId, list: `events?type=${query.type ?? ''}` };
    const page = await listEvents(deps(), principal.shopId, pageRequest(query, scope), query.type);
    return { status: 200, body: listBody(page, scope) };
  });

export const handler = makeHandler();
