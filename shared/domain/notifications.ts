import { logger } from '../logger';
import type { EventRecord } from './events';
import type { ShopStore } from './shop';
import type { EndpointRecord } from './webhook-endpoints';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * Marks an event's owner email as sent, so a replayed stream record (Lambda retrying a
 * batch, the local poller re-reading its stream) does not email the owner again.
 */
export interface NotificationClaims {
  /**
   * Claims the email of this event at `at` until `until`; false when it was sent, the event is
   * gone, or another claim is still live.
   */
  claimNotification(shopId: string, eventId: string, at: string, until: string): Promise<boolean>;
  /** Gives the claim made at `at` back, unless it has since become someone else's. */
  releaseNotification(shopId: string, eventId: string, at: string): Promise<void>;
  /** Records that the email went (`notified_at`); no claim can send it again. */
  markNotified(shopId: string, eventId: string, at: string): Promise<void>;
}

/**
 * How long a claim keeps others from sending the email: longer than one attempt at it, and
 * shorter than the queue's visibility timeout (6 min), so that the retry of a crashed
 * invocation finds the claim lapsed.
 */
export const NOTIFY_CLAIM_MS = 2 * 60_000;

/** What the fan-out queues for the owner-email function: ids only, the event is read afresh. */
export interface NotifyMessage {
  shop_id: string;
  event_id: string;
}

/**
 * The owner emails' own queue: the fan-out only puts a message on it, so a refused or slow
 * email (SES sandbox, an unverified identity) is retried there, never in the stream record.
 */
export interface NotificationQueue {
  send(message: NotifyMessage): Promise<void>;
}

export interface NotifyDeps {
  shops: Pick<ShopStore, 'get'>;
  endpoints: { get(shopId: string, id: string): Promise<EndpointRecord | null> };
  mailer: Mailer;
  notifications: NotificationClaims;
  now: () => Date;
}

/**
 * Tells the shop owner an endpoint was disabled, with the last errors (run for each
 * webhook_endpoint.disabled event). Once per event, never lost: the email is claimed on the
 * event for a while before it is sent and marked sent after; a failed send gives the claim
 * back, and a crash leaves it to lapse, so the record's retry sends it. Only a crash between
 * the send and its mark sends it twice.
 */
export async function notifyEndpointDisabled(deps: NotifyDeps, event: EventRecord): Promise<void> {
  const endpointId = String(event.data.id);
  const [shop, endpoint] = await Promise.all([
    deps.shops.get(event.shop_id),
    deps.endpoints.get(event.shop_id, endpointId),
  ]);
  if (!shop) return;
  const reason =
    event.data.disabled_reason === 'gone' ? 'it answered 410 Gone' : 'every delivery to it has failed for 3 days';
  const errors = endpoint?.last_errors?.length
    ? endpoint.last_errors.map((e) => `  - ${e}`).join('\n')
    : '  (none recorded)';
  const mail: Mail = {
    to: shop.owner_email,
    subject: `Webhook endpoint disabled: ${String(event.data.url)}`,
    text: [
      `Hello ${shop.name},`,
      '',
      `We stopped sending webhooks to ${String(event.data.url)} (${endpointId}) because ${reason}.`,
      '',
      'Last errors:',
      errors,
      '',
      'Fix the receiver, then re-enable the endpoint in the settings screen or with',
      `PATCH /v1/webhook-endpoints/${endpointId} {"enabled": true}.`,
      `Then POST /v1/webhook-endpoints/${endpointId}/recover sends it the events it missed (up to 30 days).`,
    ].join('\n'),
  };
  const now = deps.now();
  const at = now.toISOString();
  const until = new Date(now.getTime() + NOTIFY_CLAIM_MS).toISOString();
  if (!(await deps.notifications.claimNotification(event.shop_id, event.id, at, until))) return;
  try {
    await deps.mailer.send(mail);
  } catch (err) {
    try {
      await deps.notifications.releaseNotification(event.shop_id, event.id, at);
    } catch (releaseErr) {
      logger.error('Could not release the notification claim: the owner will not be emailed about this event', {
        shop_id: event.shop_id,
        event_id: event.id,
        error: releaseErr as Error,
      });
    }
    throw err;
  }
  await deps.notifications.markNotified(event.shop_id, event.id, at);
}

/**
 * The owner-email function's step: the queued event, read afresh, then notifyEndpointDisabled. A
 * gone event is nothing to do.
 */
export async function notifyFromQueue(
  deps: NotifyDeps & { events: { get(shopId: string, eventId: string): Promise<EventRecord | null> } },
  message: NotifyMessage,
): Promise<void> {
  const event = await deps.events.get(message.shop_id, message.event_id);
  if (!event || event.type !== 'webhook_endpoint.disabled') return;
  await notifyEndpointDisabled(deps, event);
}
