import { getShop } from '../../shared/domain/shop';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'shops'> = runtimeDeps) =>
  apiHandler('getShop', {}, async ({ principal }) => ({ status: 200, body: await getShop(deps(), principal.shopId) }));

export const handler = makeHandler();
