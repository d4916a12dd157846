import { AppError } from '../errors';
import { sweepGraceMs } from '../webhooks/policy';
import { queueAgain, type CurrentDeliveryStore } from './current-delivery';
import { existedAt, isSubscribed } from './deliveries';
import { EVENT_RETENTION_SECONDS, type EventRecord } from './events';
import type { RecoverInput } from './recovery-schema';
import type { Page, PageRequest } from './pagination';
import type { Resource } from './resources';
import { loadEndpoint, type EndpointRecord, type EndpointStore } from './webhook-endpoints';

export interface RecoveryDeps {
  endpoints: EndpointStore;
  events: { listBetween(shopId: string, since: Date, until: Date, page: PageRequest): Promise<Page<EventRecord>> };
  currentDeliveries: CurrentDeliveryStore;
  timeScale: number;
  now: () => Date;
}

/** Events read per page, and handled at once. */
const PAGE = 100;
const PARALLEL = 10;

/**
 * Queues one new delivery to the endpoint for every event of the window that it would be
 * sent now (its filter, created after it) and that it has not received: no `succeeded`
 * delivery to it, whatever happened before (disabled, cancelled, failed, never fanned out).
 * A delivery of the event still open for it is superseded, unless no attempt has reached it
 * yet: then it goes out as it is, so the event arrives once (./current-delivery.ts).
 * `deliveries_queued` counts both: the events of the window on their way to the endpoint.
 */
export async function recoverEndpoint(deps: RecoveryDeps, shopId: string, id: string, input: RecoverInput): Promise<Resource<'recovery'>> {
  const endpoint = await loadEndpoint(deps, shopId, id);
  const now = deps.now();
  const { since, until } = checkWindow(input, now);
  if (!endpoint.enabled) throw new AppError('invalid_state', `Webhook endpoint '${id}' is disabled; enable it before recovering its events.`);
  const opts = { skipReceived: true, sweepGraceMs: sweepGraceMs(deps.timeScale) };
  let queued = 0;
  let after: Record<string, unknown> | undefined;
  do {
    const page = await deps.events.listBetween(shopId, since, until, { limit: PAGE, after });
    const wanted = page.items.filter((e) => e.timestamp >= since.toISOString() && e.timestamp <= until.toISOString() && wouldReceive(endpoint, e));
    for (let i = 0; i < wanted.length; i += PARALLEL) {
      const outcomes = await Promise.all(wanted.slice(i, i + PARALLEL).map((e) => queueAgain(deps, e, endpoint.id, opts)));
      queued += outcomes.filter((o) => o.kind === 'queued').length;
    }
    after = page.next;
  } while (after);
  return { object: 'recovery', endpoint_id: endpoint.id, since: since.toISOString(), until: until.toISOString(), deliveries_queued: queued };
}

/** The contract's window: since < until ≤ now, since within the 30 days events are kept. */
function checkWindow(input: RecoverInput, now: Date): { since: Date; until: Date } {
  const since = new Date(input.since);
  const until = input.until ? new Date(input.until) : now;
  if (until.getTime() > now.getTime()) throw new AppError('parameter_invalid', 'until must not be in the future.', { param: 'until' });
  if (since.getTime() >= until.getTime()) throw new AppError('parameter_invalid', `since must be before until (${until.toISOString()}).`, { param: 'since' });
  if (since.getTime() < now.getTime() - EVENT_RETENTION_SECONDS * 1000) throw new AppError('parameter_invalid', 'since must be within the last 30 days: older events are no longer kept.', { param: 'since' });
  return { since, until };
}

/** As the fan-out decides now, and an endpoint is never told of its own disabling. */
function wouldReceive(endpoint: EndpointRecord, event: EventRecord): boolean {
  if (event.type === 'webhook_endpoint.disabled' && event.data.id === endpoint.id) return false;
  return isSubscribed(endpoint, event) && existedAt(endpoint, event);
}
