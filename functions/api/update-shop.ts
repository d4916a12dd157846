import { updateShop } from '../../shared/domain/shop';
import { shopPatchSchema } from '../../shared/domain/shop-schema';
import { apiHandler } from '../../shared/http/handler';
import { idempotent } from '../../shared/http/idempotency';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { shopSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { body: shopPatchSchema, response: shopSchema };

export const makeHandler = (deps: () => Pick<Deps, 'shops' | 'now'> = runtimeDeps) =>
  apiHandler('updateShop', spec, async ({ principal, body }) => ({
    status: 200,
    body: await updateShop(deps(), principal.shopId, body),
  }), { idempotency: idempotent() });

export const handler = makeHandler();
