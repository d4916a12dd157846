import { updateShop, type ShopDeps } from '../../shared/domain/shop';
import { updateShopBody } from '../../shared/domain/shop-schema';
import { apiHandler } from '../../shared/http/handler';
import { requestSchemas } from '../../shared/http/validation';
import { idempotent, type IdempotencyDeps } from '../../shared/http/idempotency';
import { idempotencyDeps, shopDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = requestSchemas({ body: updateShopBody });

export const makeHandler = (
  deps: () => Pick<ShopDeps, 'shops' | 'now'> & IdempotencyDeps = lambdaDeps(shopDeps, idempotencyDeps),
) =>
  apiHandler(
    'updateShop',
    spec,
    async ({ principal, body }) => ({
      status: 200,
      body: await updateShop(deps(), principal.shopId, body),
    }),
    { idempotency: idempotent(() => deps().idempotency) },
  );

export const handler = makeHandler();
