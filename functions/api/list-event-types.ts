import { eventTypeCatalog } from '../../shared/domain/event-catalog';
import { apiHandler } from '../../shared/http/handler';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = () =>
  apiHandler('listEventTypes', spec, () =>
    Promise.resolve({
      status: 200,
      body: { object: 'list', data: eventTypeCatalog(), has_more: false, next_cursor: null },
    }),
  );

export const handler = makeHandler();
