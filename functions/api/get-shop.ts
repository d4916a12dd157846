import { getShop } from '../../shared/domain/shop';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = {};

export const makeHandler = (deps: () => Pick<Deps, 'shops'> = runtimeDeps) =>
  apiHandler('getShop', spec, async ({ principal }) => ({ status: 200, body: await getShop(deps(), principal.shopId) }));

export const handler = makeHandler();
