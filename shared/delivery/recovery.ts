import { AppError, notFound } from '../errors';
import { EVENT_RETENTION_SECONDS } from '../domain/events';
import { findExisting } from '../domain/lookup';
import type { RecoverInput } from '../domain/recovery-schema';
import {
  newRecovery,
  recoverPage,
  toRecoveryResource,
  type RecoveryPageDeps,
  type RecoveryStore,
} from './recovery-job';
import type { Resource } from '../domain/resources';
import { loadEndpoint, type EndpointStore } from '../domain/webhook-endpoints';

export interface RecoveryDeps extends RecoveryPageDeps {
  endpoints: Pick<EndpointStore, 'get'>;
  recoveries: RecoveryStore;
}

/**
 * Queues one new delivery to the endpoint for every event of the window that it would be
 * sent now (its filter, created after it) and that it has not received: no delivery to it
 * answered 2xx (./current-delivery.ts), whatever happened before (disabled, cancelled, failed,
 * never fanned out).
 * A delivery of the event still open for it is superseded, unless no attempt has reached it
 * yet: then it goes out as it is, so the event arrives once (./current-delivery.ts).
 *
 * The first page of the window is worked before the answer (./recovery-job.ts: at most
 * RECOVERY_PAGE events, about a second), so a small window is answered `completed`; the rest
 * goes on in the background from the recovery's record (./recovery-worker.ts), which the caller
 * reads with getRecovery.
 */
export async function recoverEndpoint(
  deps: RecoveryDeps,
  shopId: string,
  id: string,
  input: RecoverInput,
): Promise<Resource<'recovery'>> {
  const endpoint = await loadEndpoint(deps, shopId, id);
  const now = deps.now();
  const { since, until } = checkWindow(input, now);
  if (!endpoint.enabled)
    throw new AppError(
      'invalid_state',
      `Webhook endpoint '${id}' is disabled; enable it before recovering its events.`,
    );
  const recovery = await recoverPage(deps, endpoint, newRecovery(endpoint, since, until, now));
  await deps.recoveries.create(recovery);
  return toRecoveryResource(recovery);
}

/** A recovery of this endpoint, as far as it has got. */
export async function getRecovery(
  deps: Pick<RecoveryDeps, 'endpoints' | 'recoveries'>,
  shopId: string,
  endpointId: string,
  recoveryId: string,
): Promise<Resource<'recovery'>> {
  const endpoint = await loadEndpoint(deps, shopId, endpointId);
  const recovery = await findExisting('rcv', 'recovery', recoveryId, (rid) => deps.recoveries.get(shopId, rid));
  if (recovery.endpoint_id !== endpoint.id) throw notFound('recovery', recoveryId);
  return toRecoveryResource(recovery);
}

/** The contract's window: since < until ≤ now, since within the 30 days events are kept. */
function checkWindow(input: RecoverInput, now: Date): { since: Date; until: Date } {
  const since = new Date(input.since);
  const until = input.until ? new Date(input.until) : now;
  if (until.getTime() > now.getTime())
    throw new AppError('parameter_invalid', 'until must not be in the future.', { param: 'until' });
  if (since.getTime() >= until.getTime())
    throw new AppError('parameter_invalid', `since must be before until (${until.toISOString()}).`, { param: 'since' });
  if (since.getTime() < now.getTime() - EVENT_RETENTION_SECONDS * 1000)
    throw new AppError('parameter_invalid', 'since must be within the last 30 days: older events are no longer kept.', {
      param: 'since',
    });
  return { since, until };
}
