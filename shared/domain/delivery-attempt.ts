import { logger } from '../logger';
import type { Sender, SendResult } from '../webhooks/sender';
import { signedHeaders } from '../webhooks/signer';
import { decide, shouldDisable, type Outcome } from '../webhooks/policy';
import type { GuardResult } from '../webhooks/url-guard';
import { messageOf, type AttemptRecord, type DeliveryMessage, type DeliveryRecord, type DeliveryStatus, type DeliveryStore, type EventReader } from './deliveries';
import { newEvent, toEventResource, type EventRecord } from './events';
import type { SecretCipher } from './secrets';
import { signingSecrets, toEndpointResource, type EndpointRecord } from './webhook-endpoints';

export interface AttemptUpdate {
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string;
  next_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  entry: AttemptRecord;
}

/** What one attempt reads: its delivery row, its event and the endpoint, each null when gone. */
export interface AttemptInputs {
  delivery: DeliveryRecord | null;
  event: EventRecord | null;
  endpoint: EndpointRecord | null;
}

export interface AttemptDeliveryStore extends DeliveryStore {
  /** The row, its event and the endpoint in one round trip (strongly consistent). */
  getForAttempt(shopId: string, eventId: string, deliveryId: string, endpointId: string): Promise<AttemptInputs>;
  /** Records attempt N only if the row still says N-1 attempts; false when another worker did. */
  recordAttempt(delivery: DeliveryRecord, update: AttemptUpdate): Promise<boolean>;
  cancel(delivery: DeliveryRecord, at: string): Promise<void>;
  /** Cancels every pending or retrying delivery of the endpoint; returns how many. */
  cancelOpenForEndpoint(shopId: string, endpointId: string, at: string): Promise<number>;
}

export interface FailureStateStore {
  get(shopId: string, id: string): Promise<EndpointRecord | null>;
  markFailing(endpoint: EndpointRecord, since: string): Promise<void>;
  clearFailing(endpoint: EndpointRecord): Promise<void>;
  /** Disables (if still enabled) and writes the event in one transaction; false if it was already disabled. */
  disable(endpoint: EndpointRecord, reason: 'failing' | 'gone', lastErrors: string[], event: EventRecord, at: string): Promise<boolean>;
}

export interface RetryScheduler {
  schedule(message: DeliveryMessage, at: Date): Promise<void>;
}

export interface AttemptDeps {
  deliveries: AttemptDeliveryStore;
  endpoints: FailureStateStore;
  events: EventReader;
  scheduler: RetryScheduler;
  sender: Sender;
  cipher: SecretCipher;
  /** URL guard with DNS, refusing names that do not resolve. */
  checkTarget: (url: string) => Promise<GuardResult>;
  timeScale: number;
  now: () => Date;
}

export type AttemptVerdict = 'delivered' | 'retry_scheduled' | 'failed' | 'cancelled' | 'duplicate' | 'missing';

const STATUS_OF: Record<Outcome['kind'], DeliveryStatus> = { succeeded: 'succeeded', retry: 'retrying', failed: 'failed', gone: 'failed' };

/**
 * One delivery attempt for one queue message. The row is the source of truth: the
 * attempt is recorded first (conditional on the attempt count), the next one scheduled
 * after; a redelivered message of a recorded attempt only re-ensures that schedule.
 */
export async function attemptDelivery(deps: AttemptDeps, message: DeliveryMessage): Promise<AttemptVerdict> {
  const read = await readInputs(deps, message);
  const { delivery, event } = read;
  if (!delivery || !event) return 'missing';
  if (delivery.status !== 'pending' && delivery.status !== 'retrying') return 'duplicate';
  if (delivery.attempts >= message.attempt) {
    if (delivery.attempts === message.attempt && delivery.next_attempt_at) {
      await deps.scheduler.schedule(messageOf(delivery), new Date(delivery.next_attempt_at));
    }
    return 'duplicate';
  }
  const endpoint = read.endpoint !== undefined && delivery.endpoint_id === message.endpoint_id ? read.endpoint : await deps.endpoints.get(delivery.shop_id, delivery.endpoint_id);
  const now = deps.now();
  if (!endpoint || !endpoint.enabled) {
    await deps.deliveries.cancel(delivery, now.toISOString());
    return 'cancelled';
  }

  const attempt = delivery.attempts + 1;
  const result = await send(deps, endpoint, event, now);
  const outcome = decide(attempt, result, deps.timeScale);
  const nextAt = outcome.kind === 'retry' ? new Date(now.getTime() + outcome.delayMs) : null;
  const error = result.error ?? (outcome.kind === 'succeeded' ? null : `HTTP ${result.status}`);
  const update: AttemptUpdate = {
    status: STATUS_OF[outcome.kind],
    attempts: attempt,
    last_attempt_at: now.toISOString(),
    next_attempt_at: nextAt?.toISOString() ?? null,
    last_response_status: result.status,
    last_error: error,
    entry: { attempt, at: now.toISOString(), status: result.status, duration_ms: result.durationMs, error, response_snippet: result.snippet },
  };
  if (!(await deps.deliveries.recordAttempt(delivery, update))) return 'duplicate';
  if (nextAt) await deps.scheduler.schedule(messageOf(delivery, attempt + 1), nextAt);

  await updateFailureState(deps, endpoint, outcome, [...delivery.history, update.entry], now);
  if (outcome.kind === 'succeeded') return 'delivered';
  return nextAt ? 'retry_scheduled' : 'failed';
}

/** One request when the message names its endpoint; two (row and event, then endpoint) for older messages. */
async function readInputs(deps: AttemptDeps, message: DeliveryMessage): Promise<Omit<AttemptInputs, 'endpoint'> & { endpoint?: EndpointRecord | null }> {
  if (message.endpoint_id) return deps.deliveries.getForAttempt(message.shop_id, message.event_id, message.delivery_id, message.endpoint_id);
  const [delivery, event] = await Promise.all([
    deps.deliveries.get(message.shop_id, message.event_id, message.delivery_id),
    deps.events.get(message.shop_id, message.event_id),
  ]);
  return { delivery, event };
}

async function send(deps: AttemptDeps, endpoint: EndpointRecord, event: EventRecord, now: Date): Promise<SendResult> {
  // The guard runs again before every delivery: DNS may have changed since the endpoint was saved.
  const target = await deps.checkTarget(endpoint.url);
  if (!target.ok) return { status: null, error: `refused target: url ${target.reason}`, retryAfterMs: null, durationMs: 0, snippet: null };
  const body = JSON.stringify(toEventResource(event));
  const headers = signedHeaders(event.id, body, await signingSecrets(deps, endpoint, now), now);
  return deps.sender.post(target.url, headers, body);
}

async function updateFailureState(deps: AttemptDeps, endpoint: EndpointRecord, outcome: Outcome, history: AttemptRecord[], now: Date) {
  if (outcome.kind === 'succeeded') {
    if (endpoint.failing_since) await deps.endpoints.clearFailing(endpoint);
    return;
  }
  const reason = outcome.kind === 'gone' ? 'gone' : shouldDisable(endpoint.failing_since, now.getTime(), deps.timeScale) ? 'failing' : null;
  if (!reason) {
    if (!endpoint.failing_since) await deps.endpoints.markFailing(endpoint, now.toISOString());
    return;
  }
  const lastErrors = history.slice(-5).map((h) => `${h.at} attempt ${h.attempt}: ${h.error ?? `HTTP ${h.status}`}`);
  const disabled = { ...endpoint, enabled: false, disabled_reason: reason, updated_at: now.toISOString() } as const;
  const event = newEvent(endpoint.shop_id, 'webhook_endpoint.disabled', toEndpointResource(disabled), now);
  if (await deps.endpoints.disable(endpoint, reason, lastErrors, event, now.toISOString())) {
    const cancelled = await deps.deliveries.cancelOpenForEndpoint(endpoint.shop_id, endpoint.id, now.toISOString());
    logger.warn('Webhook endpoint disabled', { endpoint_id: endpoint.id, shop_id: endpoint.shop_id, reason, cancelled_deliveries: cancelled });
  }
}
