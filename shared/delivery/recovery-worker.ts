import {
  cancelled,
  recoverPage,
  stallMs,
  type RecoveryPageDeps,
  type RecoveryRecord,
  type RecoveryStore,
} from './recovery-job';
import type { EndpointRecord } from '../domain/webhook-endpoints';

export interface RecoveryWorkerDeps extends RecoveryPageDeps {
  endpoints: { get(shopId: string, id: string): Promise<EndpointRecord | null> };
  recoveries: RecoveryStore;
}

export type PageVerdict = 'advanced' | 'stale' | 'cancelled' | 'lost';

/**
 * The next page of a running recovery, woken by the write of its last page (the table
 * stream: the fan-out's source) or by the sweeper's nudge. It works only from the record as
 * it is now and only if the write that woke it is the latest: an older write's record (a
 * retried batch, a replay) was followed by one that woke the worker already. A page that
 * throws leaves the record as it was, so the stream's retry of the same record works it
 * again; should those retries run out, the sweeper's nudge wakes it.
 */
export async function continueRecovery(
  deps: RecoveryWorkerDeps,
  woken: Pick<RecoveryRecord, 'shop_id' | 'id' | 'pages'>,
): Promise<PageVerdict> {
  const recovery = await deps.recoveries.get(woken.shop_id, woken.id);
  if (!recovery || recovery.status !== 'running' || recovery.pages !== woken.pages) return 'stale';
  const endpoint = await deps.endpoints.get(recovery.shop_id, recovery.endpoint_id);
  if (!endpoint?.enabled)
    return (await deps.recoveries.advance(recovery, cancelled(recovery, deps.now()))) ? 'cancelled' : 'lost';
  const next = await recoverPage(deps, endpoint, recovery);
  // Lost: another run of the same page (a nudge beside a slow retry) wrote it first; what both
  // queued is one delivery per event.
  return (await deps.recoveries.advance(recovery, next)) ? 'advanced' : 'lost';
}

const NUDGE_LIMIT = 25;

/** The sweeper's part: wakes running recoveries that have written no page for a while. Returns how many it woke. */
export async function nudgeStalledRecoveries(
  deps: Pick<RecoveryWorkerDeps, 'recoveries' | 'timeScale' | 'now'>,
): Promise<number> {
  const now = deps.now();
  const sweepAt = new Date(now.getTime() + stallMs(deps.timeScale)).toISOString();
  const woken = await Promise.all(
    (await deps.recoveries.stalled(now, NUDGE_LIMIT)).map((r) => deps.recoveries.nudge(r, sweepAt)),
  );
  return woken.filter(Boolean).length;
}
