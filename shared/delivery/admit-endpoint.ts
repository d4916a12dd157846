import { START_GRACE_MS } from './rate-window';
import { admit, leaseToken, type Admission, type Lease } from './circuit';
import type { AttemptDeps } from './ports';
import type { Due, Run } from './runway';
import type { Source } from './endpoint-plan';
import { leaseMs } from './send-attempt';
import type { EndpointRecord } from '../domain/webhook-endpoints';

/** An endpoint's admission as written, on the endpoint as it was then. */
export interface Admitted {
  endpoint: EndpointRecord;
  /** Null when every try lost its race: the deliveries wait and come back. */
  admission: Admission | null;
  /** How long after its admission a request to a rate-limited endpoint may start. */
  grace: number;
}

/**
 * Admits on the endpoint as read; a lost race re-reads it, up to three times. Null when the
 * endpoint is gone or disabled (its deliveries are cancelled); no admission: defer them all.
 * `grace`: how long after its admission a request to a rate-limited endpoint may start.
 */
export async function admitOn(
  deps: AttemptDeps,
  read: EndpointRecord,
  due: Due[],
  source: Source,
): Promise<Admitted | null> {
  // Under a rate limit, a delivery that waited for it goes first. So does a row pulled for a freed
  // slot (it waited for one): one the rate has no room for is left due, so it must take no place in
  // the line, which only a message sent for that place could fill.
  const booked = new Set(
    due.filter((d) => source === 'table' || d.message.rate_at !== undefined).map((d) => d.delivery.id),
  );
  // The batch asks for the longest grace one of its deliveries needs (one that missed the usual one).
  const grace = Math.max(START_GRACE_MS, ...due.map((d) => d.message.rate_grace ?? 0));
  let endpoint: EndpointRecord | null = read;
  for (let tries = 0; tries < 3; tries++) {
    if (!endpoint?.enabled) return null;
    // The rate's window counts from this moment, just before the write: its latency is all the grace covers.
    const terms = {
      now: deps.now().getTime(),
      leaseMs: leaseMs(deps.settings.timeoutMs, endpoint.rate_limit ? grace : undefined),
      token: leaseToken,
    };
    const admission = admit(
      endpoint,
      due.map((d) => d.delivery.id),
      terms,
      { booked, grace },
    );
    const mustWrite = admission.send.length > 0 || admission.health !== endpoint.health || !!admission.rateTail;
    if (!mustWrite || (await deps.endpoints.admit(endpoint, admission))) return { endpoint, admission, grace };
    endpoint = await deps.endpoints.get(read.shop_id, read.id);
  }
  return endpoint?.enabled ? { endpoint, admission: null, grace } : null;
}

/** A run of an admitted lease; under a rate limit, its request must start within the grace of its admission. */
export const runOf = (key: string, lease: Lease, endpoint: EndpointRecord, grace: number): Run => ({
  key,
  lease,
  ended: false,
  ...(endpoint.rate_limit ? { startGrace: grace } : {}),
});
