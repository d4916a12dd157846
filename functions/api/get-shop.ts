import { getShop, type ShopDeps } from '../../shared/domain/shop';
import { apiHandler } from '../../shared/http/handler';
import { shopDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

export const makeHandler = (deps: () => Pick<ShopDeps, 'shops'> = lambdaDeps(shopDeps)) =>
  apiHandler('getShop', spec, async ({ principal }) => ({
    status: 200,
    body: await getShop(deps(), principal.shopId),
  }));

export const handler = makeHandler();
