import { deliverBatch } from '../../shared/delivery/deliver-batch';
import { newDelivery, fanOutDeliveryId, type FanOutDeps } from '../../shared/delivery/fan-out';
import { type DeliveryMessage } from '../../shared/delivery/records';
import type { AttemptDeps } from '../../shared/delivery/ports';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { DynamoAttemptLedger } from '../../shared/delivery/dynamo/attempt-ledger';
import type { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import type { DynamoOrderStore } from '../../shared/delivery/dynamo/resource-order';
import { DynamoEventStore } from '../../shared/store/events';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import type { ApiDeps } from '../../shared/wiring/api';

/**
 * An ordered endpoint (`ordering: per_resource`) on DynamoDB Local with its fan-out and consumer,
 * a recording queue and scheduler, and a receiver whose answer to each event `answer` decides
 * (204 unless it says otherwise).
 */
export async function orderedEndpoint(
  deps: ApiDeps,
  store: DynamoDeliveryStore,
  order: DynamoOrderStore,
  answer: (eventId: string) => Promise<number | void> | number | void = () => undefined,
) {
  const shop = await createShop(deps, { name: 'Order Shop', owner_email: 'o@order.test' });
  const endpoint = await createEndpoint(
    { ...deps, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) },
    shop.id,
    { url: 'https://hooks.example.com/o', events: ['*'], ordering: 'per_resource' },
  );
  const queued: DeliveryMessage[] = [];
  const scheduled: DeliveryMessage[] = [];
  const posts: string[] = [];
  const queue = { send: async (m: DeliveryMessage[]) => void queued.push(...m) };
  const endpoints = new DynamoEndpointStore(deps.db);
  const attemptDeps: AttemptDeps = {
    deliveries: store,
    endpoints,
    ledger: new DynamoAttemptLedger(deps.db),
    order,
    queue,
    scheduler: { schedule: async (m) => void scheduled.push(m), needsSchedule: () => false },
    sender: {
      post: async (_url, _headers, body) => {
        const id = (JSON.parse(body) as { id: string }).id;
        posts.push(id);
        return { status: (await answer(id)) ?? 204, error: null, retryAfterMs: null, durationMs: 1, snippet: null };
      },
    },
    cipher: deps.cipher,
    checkTarget: async (url) => ({ ok: true, url: new URL(url) }),
    settings: { timeoutMs: 1000, deferMs: 50 },
    timeScale: 1,
    now: () => new Date(),
  };
  const fanOutDeps: FanOutDeps = {
    endpoints,
    deliveries: store,
    order,
    queue,
    scheduler: attemptDeps.scheduler,
    timeScale: 1,
    now: () => new Date(),
  };
  const events = new DynamoEventStore(deps.db);
  const emit = async (type: 'job.created' | 'job.approved', jobId: string) => {
    const event = newEvent(shop.id, type, { id: jobId }, new Date(Date.now() + 5));
    await events.put(event);
    return event;
  };
  /** The event's row as its fan-out writes it before the chain is looked at. */
  const rowWritten = async (event: EventRecord, jobId: string) => {
    const row = newDelivery(event, {
      id: fanOutDeliveryId(event.id, endpoint.id),
      endpointId: endpoint.id,
      origin: 'fanout',
      now: new Date(),
      sweepGraceMs: 60_000,
      orderKey: jobId,
    });
    await store.createMissing([row]);
    return row;
  };
  /** Runs the consumer on what is queued (and, with `retries`, what is scheduled) until nothing is left. */
  const drain = async (retries = true) => {
    for (let round = 0; round < 50 && (queued.length > 0 || (retries && scheduled.length > 0)); round++) {
      const batch = queued.splice(0, 10);
      if (retries && batch.length === 0) batch.push(...scheduled.splice(0, 10));
      await deliverBatch(attemptDeps, batch);
    }
  };
  return { shop, endpoint, endpoints, attemptDeps, fanOutDeps, queued, scheduled, posts, emit, rowWritten, drain };
}
