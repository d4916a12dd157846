import { getShop } from '../../shared/domain/shop';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { shopSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: shopSchema };

export const makeHandler = (deps: () => Pick<Deps, 'shops'> = runtimeDeps) =>
  apiHandler('getShop', spec, async ({ principal }) => ({ status: 200, body: await getShop(deps(), principal.shopId) }));

export const handler = makeHandler();
