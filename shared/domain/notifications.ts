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

export interface NotifyDeps {
  shops: Pick<ShopStore, 'get'>;
  endpoints: { get(shopId: string, id: string): Promise<(EndpointRecord & { last_errors?: string[] }) | null> };
  mailer: Mailer;
}

/** Tells the shop owner an endpoint was disabled, with the last errors (run for each webhook_endpoint.disabled event). */
export async function notifyEndpointDisabled(deps: NotifyDeps, event: EventRecord): Promise<void> {
  const endpointId = String(event.data.id);
  const [shop, endpoint] = await Promise.all([deps.shops.get(event.shop_id), deps.endpoints.get(event.shop_id, endpointId)]);
  if (!shop) return;
  const reason =
    event.data.disabled_reason === 'gone'
      ? 'it answered 410 Gone'
      : 'every delivery to it has failed for 3 days';
  const errors = endpoint?.last_errors?.length ? endpoint.last_errors.map((e) => `  - ${e}`).join('\n') : '  (none recorded)';
  await deps.mailer.send({
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
      'Events from the past 30 days can be sent again with POST /v1/events/{id}/redeliver.',
    ].join('\n'),
  });
}
