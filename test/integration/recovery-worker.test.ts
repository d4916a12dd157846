import { createShop } from '../../shared/domain/shop';
import type { CurrentDeliveryStore } from '../../shared/delivery/current-delivery';
import { isOpenStatus } from '../../shared/delivery/status';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { recoverEndpoint, getRecovery } from '../../shared/delivery/recovery';
import {
  RECOVERY_PAGE,
  RECOVERY_STEP,
  stallMs,
  type RecoveryRecord,
  recoverPage,
} from '../../shared/delivery/recovery-job';
import {
  continueRecovery,
  nudgeStalledRecoveries,
  type RecoveryWorkerDeps,
} from '../../shared/delivery/recovery-worker';
import { createEndpoint, updateEndpoint, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { keys } from '../../shared/store/keys';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

const EVENTS = 250;
/** 250 events written, recovered and checked: seconds alone, a minute and more beside the whole suite. */
const SLOW_TABLE_MS = 120_000;

describe('a recovery goes on page by page after the answer (DynamoDB Local)', () => {
  let deps: Deps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });

  /** A shop whose endpoint missed `EVENTS` events (made in the last minute, after it), and a window holding them all. */
  async function missedEvents(d: Deps = deps) {
    const shop = await createShop(d, { name: 'Recovery Shop', owner_email: 'o@recovery.test' });
    const start = Date.now() - 60_000;
    const guard = { checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }) };
    const endpoint = await createEndpoint({ ...d, ...guard, now: () => new Date(start) }, shop.id, {
      url: 'https://hooks.example.com/recover',
      events: ['call.completed'],
    });
    const events: EventRecord[] = Array.from({ length: EVENTS }, (_, i) =>
      newEvent(shop.id, 'call.completed', { id: newId('call'), object: 'call' }, new Date(start + 1000 + i * 10)),
    );
    for (let i = 0; i < events.length; i += 25) await Promise.all(events.slice(i, i + 25).map((e) => d.events.put(e)));
    // Until now: ids made in this process never go back in time (a monotonic ULID), whatever the event's timestamp.
    const window = { since: new Date(start + 500).toISOString() };
    return { shopId: shop.id, endpointId: endpoint.id, events, window, guard };
  }

  /** What the table stream would do: a page per write of the running recovery, until it has ended. */
  async function driveToEnd(worker: RecoveryWorkerDeps, shopId: string, id: string) {
    // A page is at most 100 events, fewer when the table is slow (a second's budget): 250 take 3 to 25.
    for (let pages = 0; pages < 30; pages++) {
      const recovery = await deps.recoveries.get(shopId, id);
      if (recovery?.status !== 'running') return recovery;
      await continueRecovery(worker, recovery);
    }
    throw new Error('the recovery never ended');
  }

  async function openRowsPerEvent(shopId: string, events: EventRecord[]): Promise<number[]> {
    const store = new DynamoDeliveryStore(deps.db);
    return Promise.all(
      events.map(async (e) => (await store.listForEvent(shopId, e.id)).filter((d) => isOpenStatus(d.status)).length),
    );
  }

  it(
    `answers after its first page (at most ${RECOVERY_PAGE} events) as running, and the worker completes the window: one delivery per event, every one counted`,
    async () => {
      const { shopId, endpointId, events, window } = await missedEvents();
      const answer = await recoverEndpoint(deps, shopId, endpointId, window);
      expect(answer).toMatchObject({ object: 'recovery', status: 'running', completed_at: null });
      // Every event of the window is for the endpoint: the count is how far the page got, in whole steps.
      expect([
        answer.deliveries_queued % RECOVERY_STEP,
        answer.deliveries_queued > 0 && answer.deliveries_queued <= RECOVERY_PAGE,
      ]).toEqual([0, true]);
      expect(answer.checked_through).toBe(events[answer.deliveries_queued - 1]?.timestamp);
      expect(await getRecovery(deps, shopId, endpointId, answer.id)).toEqual(answer);
      // The sweeper's list of running recoveries holds it until it ends.
      expect((await deps.recoveries.stalled(new Date(Date.now() + stallMs(1) + 1000), 100)).map((r) => r.id)).toContain(
        answer.id,
      );

      const done = await driveToEnd(deps, shopId, answer.id);
      expect(done).toMatchObject({
        status: 'completed',
        deliveries_queued: EVENTS,
        checked_through: answer.until,
        sweep_at: null,
      });
      expect(done?.pages).toBeGreaterThanOrEqual(Math.ceil(EVENTS / RECOVERY_PAGE));
      expect(await openRowsPerEvent(shopId, events)).toEqual(events.map(() => 1));
      expect(
        (await deps.recoveries.stalled(new Date(Date.now() + stallMs(1) + 1000), 100)).map((r) => r.id),
      ).not.toContain(answer.id);
      expect(await getRecovery(deps, shopId, endpointId, answer.id)).toMatchObject({
        status: 'completed',
        deliveries_queued: EVENTS,
        completed_at: expect.any(String),
      });
    },
    SLOW_TABLE_MS,
  );

  it(
    'a page that fails midway is worked again from the same position: nothing lost, nothing queued twice, the count exact',
    async () => {
      const { shopId, endpointId, events, window } = await missedEvents();
      const answer = await recoverEndpoint(deps, shopId, endpointId, window);
      let replaced = 0;
      const crashing: CurrentDeliveryStore = {
        ofEvent: (s, e, ids) => deps.currentDeliveries.ofEvent(s, e, ids),
        ofEvents: (s, ids, endpointId) => deps.currentDeliveries.ofEvents(s, ids, endpointId),
        replace: async (...args) => {
          // In the page's first step (a page always takes one): some of its events queued, the rest not.
          if (++replaced > 4) throw new Error('the worker died mid-page');
          return deps.currentDeliveries.replace(...args);
        },
      };
      const first = await deps.recoveries.get(shopId, answer.id);
      await expect(continueRecovery({ ...deps, currentDeliveries: crashing }, first as never)).rejects.toThrow(
        'mid-page',
      );
      // Nothing of the failed page is recorded: the stream's retry of the same record works it again.
      const after = await deps.recoveries.get(shopId, answer.id);
      expect(after).toEqual(first);
      expect(await continueRecovery(deps, after as never)).toBe('advanced');
      const done = await driveToEnd(deps, shopId, answer.id);
      expect(done).toMatchObject({ status: 'completed', deliveries_queued: EVENTS });
      expect(await openRowsPerEvent(shopId, events)).toEqual(events.map(() => 1));
    },
    SLOW_TABLE_MS,
  );

  it(
    'a record of an older write works nothing; two runs of one page write it once',
    async () => {
      const { shopId, endpointId, events, window } = await missedEvents();
      const answer = await recoverEndpoint(deps, shopId, endpointId, window);
      const current = (await deps.recoveries.get(shopId, answer.id)) as RecoveryRecord;
      expect(await continueRecovery(deps, { ...current, pages: current.pages - 1 })).toBe('stale');
      expect(await deps.recoveries.get(shopId, answer.id)).toEqual(current);
      // A nudge beside a slow retry: both work page 2; one writes it, the other finds it written.
      const verdicts = await Promise.all([continueRecovery(deps, current), continueRecovery(deps, current)]);
      expect(verdicts).toContain('advanced');
      expect(verdicts.filter((v) => v === 'advanced')).toHaveLength(1);
      const done = await driveToEnd(deps, shopId, answer.id);
      expect(done).toMatchObject({ status: 'completed', deliveries_queued: EVENTS });
      expect(await openRowsPerEvent(shopId, events)).toEqual(events.map(() => 1));
    },
    SLOW_TABLE_MS,
  );

  it(
    "a page worked twice, the second run after the first run's deliveries were sent: the count is the same whichever run writes it",
    async () => {
      const { shopId, endpointId, events, window } = await missedEvents();
      const answer = await recoverEndpoint(deps, shopId, endpointId, window);
      const current = (await deps.recoveries.get(shopId, answer.id)) as RecoveryRecord;
      const endpoint = (await deps.endpoints.get(shopId, endpointId)) as EndpointRecord;
      // Both runs read a whole page: a clock that stands still keeps either from stopping at the run's time budget on a loaded machine.
      const frozen = new Date();
      const still = { ...deps, now: () => frozen };
      // A slow run of page 2 queues its events but has not written the page yet…
      const slow = await recoverPage(still, endpoint, current);
      expect(slow.deliveries_queued).toBeGreaterThan(answer.deliveries_queued);
      // …the consumer sends what it queued…
      const store = new DynamoDeliveryStore(deps.db);
      for (const e of events) {
        for (const d of (await store.listForEvent(shopId, e.id)).filter((r) => isOpenStatus(r.status))) {
          await deps.db.doc.update({
            TableName: deps.db.tableName,
            Key: keys.delivery(shopId, d.endpoint_id, d.id),
            UpdateExpression: 'SET #s = :s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': 'succeeded' },
          });
        }
      }
      // …and the sweeper's nudge works the same page again, and writes it first: it finds those events received, by this recovery.
      expect(await continueRecovery(still, current)).toBe('advanced');
      expect(await deps.recoveries.get(shopId, answer.id)).toMatchObject({
        deliveries_queued: slow.deliveries_queued,
        checked_through: slow.checked_through,
      });
      expect(await driveToEnd(deps, shopId, answer.id)).toMatchObject({
        status: 'completed',
        deliveries_queued: EVENTS,
      });
    },
    SLOW_TABLE_MS,
  );

  it(
    'the sweeper wakes a running recovery that has written no page for a while, once per stall',
    async () => {
      // A table of its own: the sweeper's list spans every shop.
      const own = await useFreshTable();
      const { shopId, endpointId, window } = await missedEvents(own);
      const answer = await recoverEndpoint(own, shopId, endpointId, window);
      const stalledAt = new Date(Date.now() + stallMs(1) + 1000);
      expect(await nudgeStalledRecoveries({ ...own, timeScale: 1, now: () => new Date() })).toBe(0);
      expect(await nudgeStalledRecoveries({ ...own, timeScale: 1, now: () => stalledAt })).toBe(1);
      const nudged = await own.recoveries.get(shopId, answer.id);
      expect(nudged).toMatchObject({
        status: 'running',
        pages: 1,
        sweep_at: new Date(stalledAt.getTime() + stallMs(1)).toISOString(),
      });
      expect(await nudgeStalledRecoveries({ ...own, timeScale: 1, now: () => stalledAt })).toBe(0);
      // The nudge changed no page: the record it makes still wakes the worker for page 2.
      expect(await continueRecovery(own, nudged as never)).toBe('advanced');
    },
    SLOW_TABLE_MS,
  );

  it(
    'ends cancelled when its endpoint is disabled before it finishes',
    async () => {
      const { shopId, endpointId, window, guard } = await missedEvents();
      const answer = await recoverEndpoint(deps, shopId, endpointId, window);
      await updateEndpoint({ ...deps, ...guard }, shopId, endpointId, { enabled: false });
      const current = await deps.recoveries.get(shopId, answer.id);
      expect(await continueRecovery(deps, current as never)).toBe('cancelled');
      expect(await getRecovery(deps, shopId, endpointId, answer.id)).toMatchObject({
        status: 'cancelled',
        deliveries_queued: answer.deliveries_queued,
        completed_at: expect.any(String),
      });
      expect(
        (await deps.recoveries.stalled(new Date(Date.now() + stallMs(1) + 1000), 100)).map((r) => r.id),
      ).not.toContain(answer.id);
    },
    SLOW_TABLE_MS,
  );
});
