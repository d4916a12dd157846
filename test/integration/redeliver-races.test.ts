import { createShop } from '../../shared/domain/shop';
import { newDelivery, fanOutDeliveryId } from '../../shared/delivery/fan-out';
import { type DeliveryRecord } from '../../shared/delivery/records';
import type { AttemptUpdate } from '../../shared/delivery/ports';
import { isOpenStatus } from '../../shared/delivery/status';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { recoverEndpoint } from '../../shared/delivery/recovery';
import { redeliver } from '../../shared/delivery/redeliver';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

/** How a delivery of the event to the endpoint stands before the requests race. */
type Start = 'none' | 'pending' | 'retrying' | 'succeeded' | 'cancelled';
/** Trials of concurrent requests, each retrying its lost races: seconds alone, much longer on a loaded machine. */
const TRIALS = 5;

describe('redeliver and recover racing each other (DynamoDB Local, many interleavings)', () => {
  let deps: Deps;
  let store: DynamoDeliveryStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    store = new DynamoDeliveryStore(deps.db);
  });

  /** A shop with one endpoint made a minute ago (so every event after it is "for" it). */
  async function tenant() {
    const shop = await createShop(deps, { name: 'Race Shop', owner_email: 'o@race.test' });
    const made = new Date(Date.now() - 60_000);
    const endpoint = await createEndpoint(
      { ...deps, now: () => made, checkUrl: async (url) => ({ ok: true, url: new URL(url) }) },
      shop.id,
      { url: 'https://hooks.example.com/race', events: ['call.completed'] },
    );
    return { shopId: shop.id, endpointId: endpoint.id };
  }

  /** An event of 30 s ago and, unless `none`, its fan-out delivery in the given state. */
  async function eventWith(
    shopId: string,
    endpointId: string,
    start: Start,
    at = new Date(Date.now() - 30_000),
  ): Promise<{ event: EventRecord; first?: DeliveryRecord }> {
    const event = newEvent(shopId, 'call.completed', { id: newId('call'), object: 'call' }, at);
    await deps.events.put(event);
    if (start === 'none') return { event };
    const first = {
      ...newDelivery(event, { id: fanOutDeliveryId(event.id, endpointId), endpointId, origin: 'fanout', now: at }),
    };
    if (start !== 'pending')
      Object.assign(first, { status: start, attempts: 1, sweep_at: start === 'retrying' ? first.sweep_at : null });
    await store.createAll([first]);
    return { event, first };
  }

  const rowsTo = async (shopId: string, eventId: string, endpointId: string) =>
    (await store.listForEvent(shopId, eventId)).filter((d) => d.endpoint_id === endpointId);
  const currentOf = async (shopId: string, eventId: string, endpointId: string) =>
    (await deps.currentDeliveries.ofEvent(shopId, eventId, [endpointId])).current.get(endpointId);

  it.each<Start>(['none', 'pending', 'retrying', 'succeeded', 'cancelled'])(
    '6 concurrent redelivers (delivery %s before): one open delivery, the one every request answers with',
    async (start) => {
      const { shopId, endpointId } = await tenant();
      for (let trial = 0; trial < TRIALS; trial++) {
        const { event, first } = await eventWith(shopId, endpointId, start);
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => redeliver(deps, shopId, event.id, [endpointId])),
        );
        const answered = [...new Set(answers.map((a) => a.deliveries[0]?.id))];
        expect(answered).toHaveLength(1);
        const rows = await rowsTo(shopId, event.id, endpointId);
        expect(rows.filter((d) => isOpenStatus(d.status)).map((d) => d.id)).toEqual(answered);
        if (start === 'pending') {
          // Not attempted yet: it may be in flight, so it goes out as it is rather than beside a new one.
          expect(answered).toEqual([first?.id]);
          expect(rows).toHaveLength(1);
        } else {
          expect(answered).not.toContain(first?.id);
          expect(await currentOf(shopId, event.id, endpointId)).toBe(answered[0]);
          expect(rows).toHaveLength(start === 'none' ? 1 : 2);
          const before = rows.find((d) => d.id === first?.id);
          if (first) expect(before?.status).toBe(start === 'retrying' ? 'cancelled' : start);
        }
      }
    },
  );

  it('5 concurrent recovers of 8 events: each event not yet received has one open delivery, and every recover counts each of them', async () => {
    const starts: Start[] = ['none', 'none', 'retrying', 'pending', 'succeeded', 'none', 'retrying', 'cancelled'];
    for (let trial = 0; trial < TRIALS; trial++) {
      const { shopId, endpointId } = await tenant();
      const since = new Date(Date.now() - 40_000);
      const events = [];
      for (const [i, start] of starts.entries())
        events.push({ start, ...(await eventWith(shopId, endpointId, start, new Date(since.getTime() + 1000 + i))) });
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => recoverEndpoint(deps, shopId, endpointId, { since: since.toISOString() })),
      );
      expect(answers.map((a) => [a.status, a.deliveries_queued])).toEqual(answers.map(() => ['completed', 7]));
      for (const { start, event, first } of events) {
        const rows = await rowsTo(shopId, event.id, endpointId);
        if (start === 'succeeded') {
          expect(rows.map((d) => d.id)).toEqual([first?.id]);
          continue;
        }
        const open = rows.filter((d) => isOpenStatus(d.status));
        expect(open).toHaveLength(1);
        if (start === 'pending') expect(open[0]?.id).toBe(first?.id);
        else expect(rows).toHaveLength(start === 'none' ? 1 : 2);
      }
    }
  }, 90_000);

  it('redelivers and recovers racing a consumer that records attempts: never two open deliveries, and the current one is never cancelled', async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const { shopId, endpointId } = await tenant();
      const since = new Date(Date.now() - 40_000);
      const { event } = await eventWith(shopId, endpointId, 'retrying', new Date(since.getTime() + 1000));
      let racing = true;
      const consumer = (async () => {
        let n = 0;
        while (racing) {
          for (const d of (await rowsTo(shopId, event.id, endpointId)).filter((r) => isOpenStatus(r.status)))
            await store.recordAttempt(d, attemptOn(d, ++n % 3 === 0));
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      const requests = Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? redeliver(deps, shopId, event.id, [endpointId])
          : recoverEndpoint(deps, shopId, endpointId, { since: since.toISOString() }),
      );
      await Promise.all(requests);
      racing = false;
      await consumer;
      const rows = await rowsTo(shopId, event.id, endpointId);
      expect(rows.filter((d) => isOpenStatus(d.status)).length).toBeLessThanOrEqual(1);
      const currentId = await currentOf(shopId, event.id, endpointId);
      expect(rows.find((d) => d.id === currentId)?.status).toMatch(/^(pending|retrying|succeeded)$/);
    }
  }, 90_000);
});

/** What the consumer records for the row's next attempt: a 204, or a 500 with the retry a minute away. */
function attemptOn(d: DeliveryRecord, succeeded: boolean): AttemptUpdate {
  const at = new Date();
  const n = d.attempts + 1;
  const entry = {
    attempt: n,
    at: at.toISOString(),
    status: succeeded ? 204 : 500,
    duration_ms: 3,
    error: succeeded ? null : 'HTTP 500',
    response_snippet: null,
  };
  if (succeeded)
    return {
      status: 'succeeded',
      attempts: n,
      last_attempt_at: entry.at,
      next_attempt_at: null,
      sweep_at: null,
      last_response_status: 204,
      last_error: null,
      entry,
    };
  const next = new Date(at.getTime() + 60_000).toISOString();
  return {
    status: 'retrying',
    attempts: n,
    last_attempt_at: entry.at,
    next_attempt_at: next,
    sweep_at: next,
    last_response_status: 500,
    last_error: 'HTTP 500',
    entry,
  };
}
