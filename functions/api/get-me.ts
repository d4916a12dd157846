import { getKeyProfile } from '../../shared/domain/key-profile';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';

/** The request schemas of this operation (validated here); its success response is documented in lib/openapi/responses.ts. */
export const spec = {};

export const makeHandler = (deps: () => Pick<Deps, 'shops'> = runtimeDeps) =>
  apiHandler('getMe', spec, async ({ principal }) => ({ status: 200, body: await getKeyProfile(deps(), principal) }));

export const handler = makeHandler();
