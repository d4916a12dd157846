import { getKeyProfile } from '../../shared/domain/key-profile';
import { apiHandler } from '../../shared/http/handler';
import { runtimeDeps, type Deps } from '../../shared/runtime';
import { keyProfileSchema } from '../../shared/openapi/resources';

/** Request and response of this operation, for validation and the OpenAPI document. */
export const spec = { response: keyProfileSchema };

export const makeHandler = (deps: () => Pick<Deps, 'shops'> = runtimeDeps) =>
  apiHandler('getMe', spec, async ({ principal }) => ({ status: 200, body: await getKeyProfile(deps(), principal) }));

export const handler = makeHandler();
