import { eventTypeCatalogText } from '../../shared/domain/event-catalog';
import { apiHandler } from '../../shared/http/handler';
import { JsonText } from '../../shared/http/response';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

/** The whole list, one page: read once per process, on its first request. */
let list: JsonText | undefined;
const eventTypeList = () =>
  (list ??= new JsonText(`{"object":"list","data":${eventTypeCatalogText()},"has_more":false,"next_cursor":null}`));

export const makeHandler = () =>
  apiHandler('listEventTypes', spec, () => Promise.resolve({ status: 200, body: eventTypeList() }));

export const handler = makeHandler();
