import { getEvent } from '../../shared/domain/event-log';
import type { Resource } from '../../shared/domain/resources';
import { listEndpoints, updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { AppError } from '../../shared/errors';
import { isId } from '../../shared/ids';
import type { ApiDeps as Deps } from '../../shared/wiring/api';

/**
 * The operator's webhook commands (`endpoint list|enable`, `event show`): what they print, from the
 * API's own resources.
 */

type Endpoint = Resource<'webhookEndpoint'>;

/** Disabled, or not answering well right now: what an operator looks at first. */
export const isFailing = (e: Endpoint): boolean =>
  !e.enabled || e.failing_since !== null || e.health.circuit !== 'closed' || e.health.consecutive_failures > 0;

export async function listShopEndpoints(deps: Deps, shopId: string, failingOnly: boolean): Promise<Endpoint[]> {
  const { items } = await listEndpoints(deps, shopId);
  return failingOnly ? items.filter(isFailing) : items;
}

export function endpointLine(e: Endpoint): string {
  const state = e.enabled ? 'enabled' : `disabled (${e.disabled_reason ?? 'manual'})`;
  const failing = e.failing_since ? ` failing since ${e.failing_since}` : '';
  return (
    `${e.id}  ${state}  circuit ${e.health.circuit}, ${e.health.consecutive_failures} ` +
    `failures${failing}  ${e.url}  [${e.events.join(', ')}]`
  );
}

/** Re-enables as PATCH enabled:true does (clears the failure state); null when there is no such endpoint. */
export async function enableEndpoint(deps: Deps, shopId: string, id: string): Promise<Endpoint | null> {
  try {
    return await updateEndpoint(deps, shopId, id, { enabled: true });
  } catch (err) {
    if (err instanceof AppError && err.code === 'resource_missing') return null;
    throw err;
  }
}

export async function showEvent(
  deps: Deps,
  shopId: string,
  id: string,
): Promise<Resource<'eventWithDeliveries'> | null> {
  if (!isId('evt', id)) return null;
  try {
    return await getEvent(deps, shopId, id);
  } catch (err) {
    if (err instanceof AppError && err.code === 'resource_missing') return null;
    throw err;
  }
}

export function eventLines(e: Resource<'eventWithDeliveries'>): string[] {
  const lines = [`${e.id}  ${e.type}  ${e.timestamp}  ${e.deliveries.length} deliveries`];
  for (const d of e.deliveries) {
    lines.push(
      `  ${d.id} → ${d.endpoint_id}  ${d.status}, ${d.attempts} ` +
        `attempts${d.next_attempt_at ? `, next ${d.next_attempt_at}` : ''}`,
    );
    for (const a of d.attempt_log) {
      const answer = a.response_status === null ? 'no answer' : `HTTP ${a.response_status}`;
      const snippet = a.response_snippet ? `  "${a.response_snippet.replace(/\s+/g, ' ').slice(0, 120)}"` : '';
      lines.push(`    #${a.attempt} ${a.at}  ${answer}  ${a.duration_ms} ms${a.error ? `  ${a.error}` : ''}${snippet}`);
    }
  }
  return lines;
}
