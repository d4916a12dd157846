import { listEndpointDeliveries, type EndpointPageDeps } from '../../shared/domain/endpoint-lifecycle';
import { listWebhookEndpointDeliveriesQuery } from '../../shared/domain/endpoint-lifecycle-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { listBody, pageRequest, type CursorDeps } from '../../shared/http/list';
import { cursorDeps, endpointPageDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ query: listWebhookEndpointDeliveriesQuery });

export const makeHandler = (deps: () => EndpointPageDeps & CursorDeps = lambdaDeps(endpointPageDeps, cursorDeps)) =>
  apiHandler('listWebhookEndpointDeliveries', spec, async ({ principal, pathParameters, query }) => {
    const id = pathParameters.id ?? '';
    // The cursor is bound to this endpoint and filter: another endpoint's list refuses it. `rows`:
    // its position is a table key; a cursor given out while the list was read from an index is refused.
    const scope = {
      shopId: principal.shopId,
      list: `webhook-endpoints/${id}/deliveries/rows?status=${query.status ?? ''}`,
    };
    const key = await deps().cursorKey();
    const page = await listEndpointDeliveries(
      deps(),
      principal.shopId,
      id,
      pageRequest(query, scope, key),
      query.status,
    );
    return { status: 200, body: listBody(page, scope, key) };
  });

export const handler = makeHandler();
