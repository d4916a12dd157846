import { logger } from '../logger';
import { shouldDisable, type Outcome } from './policy';
import type { AttemptRecord } from './records';
import type { AttemptDeps } from './ports';
import { eventWithId } from '../domain/events';
import { derivedId } from '../ids';
import { cancelQueued, toEndpointResource, type EndpointRecord } from '../domain/webhook-endpoints';

/**
 * After a failed attempt: a 410 disables the endpoint at once; 3 (scaled) days of failure
 * with no success since `failing_since` disable it on this failure. Disabling writes the
 * `webhook_endpoint.disabled` event in the same transaction and cancels what is queued. The
 * event takes the time of that write, not of the attempt, which may have begun seconds before:
 * an endpoint enabled in between was enabled before the disabling, and is sent the event.
 */
export async function disableIfDue(
  deps: Pick<AttemptDeps, 'endpoints' | 'deliveries' | 'timeScale' | 'now'>,
  endpoint: EndpointRecord,
  outcome: Outcome,
  history: AttemptRecord[],
): Promise<void> {
  const now = deps.now();
  const reason =
    outcome.kind === 'gone'
      ? 'gone'
      : shouldDisable(endpoint.failing_since, now.getTime(), deps.timeScale)
        ? 'failing'
        : null;
  if (!reason) return;
  const lastErrors = history.slice(-5).map((h) => `${h.at} attempt ${h.attempt}: ${h.error ?? `HTTP ${h.status}`}`);
  const disabled = { ...endpoint, enabled: false, disabled_reason: reason, updated_at: now.toISOString() } as const;
  // Derived from the endpoint and the failure it ends: consumers racing to disable it make one
  // event id (and the consumer's bundle needs no id generator).
  const eventId = derivedId('evt', now.getTime(), `${endpoint.id}/disabled/${reason}/${endpoint.failing_since ?? ''}`);
  const event = eventWithId(eventId, endpoint.shop_id, 'webhook_endpoint.disabled', toEndpointResource(disabled), now);
  if (await deps.endpoints.disable(endpoint, reason, lastErrors, event, now.toISOString())) {
    const cancelled = await cancelQueued(deps, endpoint, now);
    logger.warn('Webhook endpoint disabled', {
      endpoint_id: endpoint.id,
      shop_id: endpoint.shop_id,
      reason,
      cancelled_deliveries: cancelled,
    });
  }
}
