import { ingestCall } from '../../shared/domain/calls';
import { disableIfDue } from '../../shared/delivery/endpoint-failure';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/event-types';
import { approveJob, declineJob } from '../../shared/domain/jobs';
import type { Shop } from '../../shared/domain/shop';
import { createEndpoint, updateEndpoint } from '../../shared/domain/webhook-endpoints';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import type { ApiDeps } from '../../shared/wiring/api';
import { simulatedCall } from './simulate';

export type TriggerType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
export const isTriggerType = (value: string): value is TriggerType =>
  (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(value);

export interface Triggered {
  /** The event of the asked type. */
  event_id: string;
  /** Every event the triggering change wrote, in order (e.g. a job is approved after its call). */
  event_ids: string[];
  /** What was created or changed, by kind. */
  objects: Record<string, string>;
}

/** The endpoint that `trigger webhook_endpoint.disabled` disables: one per shop, re-enabled and reused. */
const FIXTURE_DESCRIPTION = 'trigger fixture: disabled by `npm run cli -- trigger webhook_endpoint.disabled`';
// The discard port on loopback: never delivered to, it only exists to be disabled.
const FIXTURE_URL = 'http://127.0.0.1:9/trigger-fixture';

/**
 * Makes the change that emits one event of `type` for `shop`, through the same domain code
 * as the real thing (like `stripe trigger`, some changes need another first: an approved job
 * comes from a call).
 */
export async function trigger(deps: ApiDeps, shop: Shop, type: TriggerType): Promise<Triggered> {
  if (type === 'webhook_endpoint.disabled') return disableFixture(deps, shop);
  const withJob = type !== 'call.completed';
  const call = await ingestCall(deps, simulatedCall(shop, { withJob, emergency: false, endedAt: deps.now() }));
  const jobId = call.job_ids[0];
  const objects: Record<string, string> = { call: call.call_id, ...(jobId ? { job: jobId } : {}) };
  if (type === 'call.completed' || type === 'job.created') {
    const index = type === 'call.completed' ? 0 : call.event_ids.length - 1;
    return { event_id: call.event_ids[index] as string, event_ids: call.event_ids, objects };
  }
  if (!jobId) throw new Error('the simulated call created no job');
  // A shop that books automatically approves at once: its job is no longer pending.
  if (shop.booking_mode === 'auto_book')
    throw new Error(
      `shop ${shop.id} books ${shop.booking_mode}: its jobs are never pending, so ${type} cannot be triggered`,
    );
  if (type === 'job.approved') await approveJob(deps, shop.id, jobId, { version: 1 });
  else await declineJob(deps, shop.id, jobId, { version: 1, reason: 'Declined by `npm run cli -- trigger`' });
  const decided = (await deps.events.list(shop.id, { limit: 1 }, type)).items[0];
  if (!decided) throw new Error(`no ${type} event was written`);
  return { event_id: decided.id, event_ids: [...call.event_ids, decided.id], objects };
}

/** Disables the shop's fixture endpoint as a 410 Gone answer would (created, or re-enabled, first). */
async function disableFixture(deps: ApiDeps, shop: Shop): Promise<Triggered> {
  let fixture = (await deps.endpoints.list(shop.id)).find((e) => e.description === FIXTURE_DESCRIPTION);
  if (!fixture) {
    // Loopback is allowed for this one URL whatever the stack's policy: it is disabled at once
    // and never delivered to (the consumer checks every target again before sending).
    const created = await createEndpoint({ ...deps, policy: { ...deps.policy, allowInsecureLocal: true } }, shop.id, {
      url: FIXTURE_URL,
      events: ['webhook_endpoint.disabled'],
      description: FIXTURE_DESCRIPTION,
    });
    fixture = (await deps.endpoints.get(shop.id, created.id)) ?? undefined;
  } else if (!fixture.enabled) {
    await updateEndpoint(deps, shop.id, fixture.id, { enabled: true }); // no URL change: no guard
    fixture = (await deps.endpoints.get(shop.id, fixture.id)) ?? undefined;
  }
  if (!fixture) throw new Error('the fixture endpoint vanished');
  const stores = {
    endpoints: new DynamoEndpointStore(deps.db),
    deliveries: new DynamoDeliveryStore(deps.db),
    timeScale: deps.timeScale,
    now: deps.now,
  };
  await disableIfDue(stores, fixture, { kind: 'gone' }, []);
  const event = (await deps.events.list(shop.id, { limit: 1 }, 'webhook_endpoint.disabled')).items[0];
  if (!event) throw new Error('no webhook_endpoint.disabled event was written');
  return { event_id: event.id, event_ids: [event.id], objects: { webhook_endpoint: fixture.id } };
}
