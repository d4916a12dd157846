import { getRecovery, type RecoveryDeps } from '../../shared/delivery/recovery';
import { apiHandler } from '../../shared/http/handler';
import { recoveryDeps } from '../../shared/wiring/api';
import { lambdaDeps } from '../../shared/wiring/memo';

/**
 * The request schemas of this operation (validated here); its success response is documented in
 * lib/openapi/responses.ts.
 */
export const spec = {};

/** How far a recovery has got: what a caller polls after a recover answered `running`. */
export const makeHandler = (deps: () => Pick<RecoveryDeps, 'endpoints' | 'recoveries'> = lambdaDeps(recoveryDeps)) =>
  apiHandler('getWebhookEndpointRecovery', spec, async ({ principal, pathParameters }) => ({
    status: 200,
    body: await getRecovery(deps(), principal.shopId, pathParameters.id ?? '', pathParameters.recovery_id ?? ''),
  }));

export const handler = makeHandler();
