import { updateShop } from '../../shared/domain/shop';
import { updateShopBody } from '../../shared/domain/shop-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = { body: updateShopBody };

export const makeHandler = (deps: () => Pick<Deps, 'shops' | 'now'> = runtimeDeps) =>
  apiHandler('updateShop', spec, async ({ principal, body }) => ({
    status: 200,
    body: await updateShop(deps(), principal.shopId, body),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
