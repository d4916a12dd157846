import { getKeyProfile } from '../../shared/domain/key-profile';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

export const makeHandler = (deps: () => Pick<Deps, 'shops'> = runtimeDeps) =>
  apiHandler('getMe', {}, async ({ principal }) => ({ status: 200, body: await getKeyProfile(deps(), principal) }));

export const handler = makeHandler();
