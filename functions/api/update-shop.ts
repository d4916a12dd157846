import { updateShop } from '../../shared/domain/shop';
import { shopPatchSchema } from '../../shared/domain/shop-schema';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'shops' | 'now'> = runtimeDeps) =>
  apiHandler('updateShop', { body: shopPatchSchema }, async ({ principal, body }) => ({
    status: 200,
    body: await updateShop(deps(), principal.shopId, body),
  }));

export const handler = makeHandler();
