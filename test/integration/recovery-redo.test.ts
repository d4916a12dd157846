import { createShop } from '../../shared/domain/shop';
import type { CurrentDeliveryStore } from '../../shared/delivery/current-delivery';
import type { DeliveryRecord } from '../../shared/delivery/records';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { recoverEndpoint } from '../../shared/delivery/recovery';
import { recoverPage, type RecoveryRecord } from '../../shared/delivery/recovery-job';
import { continueRecovery, type RecoveryWorkerDeps } from '../../shared/delivery/recovery-worker';
import { createEndpoint, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { newId } from '../../shared/ids';
import { DynamoAttemptDeliveryStore } from '../../shared/delivery/dynamo/attempt-deliveries';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { observeTable } from '../../shared/store/client';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

const EVENTS = 250;
/** 250 events written, recovered and checked: seconds alone, a minute and more beside the whole suite. */
const SLOW_TABLE_MS = 120_000;

/**
 * Two runs of one page of a recovery (a nudge beside a slow run, the stream's retry of a run
 * that outlived its invocation) while the consumer makes attempts: whichever reads first and
 * whichever writes first, the recovery queues each event once.
 */
describe('a page of a recovery worked twice queues each event once (DynamoDB Local)', () => {
  let deps: Deps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });

  /** A recovery past its first page, of a window of EVENTS events its endpoint missed, and the worker's view of it. */
  async function pastFirstPage() {
    const shop = await createShop(deps, { name: 'Redo Shop', owner_email: 'o@redo.test' });
    const start = Date.now() - 60_000;
    const guard = { checkUrl: async (url: string) => ({ ok: true as const, url: new URL(url) }) };
    const created = await createEndpoint({ ...deps, ...guard, now: () => new Date(start) }, shop.id, {
      url: 'https://hooks.example.com/redo',
      events: ['call.completed'],
    });
    const events: EventRecord[] = Array.from({ length: EVENTS }, (_, i) =>
      newEvent(shop.id, 'call.completed', { id: newId('call'), object: 'call' }, new Date(start + 1000 + i * 10)),
    );
    for (let i = 0; i < events.length; i += 25)
      await Promise.all(events.slice(i, i + 25).map((e) => deps.events.put(e)));
    const answer = await recoverEndpoint(deps, shop.id, created.id, { since: new Date(start + 500).toISOString() });
    const current = (await deps.recoveries.get(shop.id, answer.id)) as RecoveryRecord;
    expect(current).toMatchObject({ status: 'running', pages: 1 });
    // A clock that stands still: each run works a whole page, whatever the machine's load.
    const frozen = new Date();
    const still: RecoveryWorkerDeps = { ...deps, now: () => frozen };
    const endpoint = (await deps.endpoints.get(shop.id, created.id)) as EndpointRecord;
    return { shopId: shop.id, endpoint, events, current, still };
  }

  /** The endpoint's deliveries of each event. */
  async function rowsPerEvent(shopId: string, endpointId: string, events: EventRecord[]): Promise<DeliveryRecord[][]> {
    const store = new DynamoDeliveryStore(deps.db);
    return Promise.all(
      events.map(async (e) => (await store.listForEvent(shopId, e.id)).filter((d) => d.endpoint_id === endpointId)),
    );
  }

  /** The events with other than one delivery to the endpoint, and those deliveries' statuses and attempts. */
  async function queuedTwice(shopId: string, endpointId: string, events: EventRecord[]) {
    const rows = await rowsPerEvent(shopId, endpointId, events);
    return rows.flatMap((r, i) => (r.length === 1 ? [] : [[events[i]?.id, r.map((d) => [d.status, d.attempts])]]));
  }

  /** The consumer's first attempt at every delivery not attempted yet, answered 500: each is `retrying` after it. */
  async function firstAttemptsFail(shopId: string, endpointId: string, events: EventRecord[]): Promise<number> {
    const rows = (await rowsPerEvent(shopId, endpointId, events))
      .flat()
      .filter((d) => d.status === 'pending' && d.attempts === 0);
    const store = new DynamoAttemptDeliveryStore(deps.db);
    const at = new Date().toISOString();
    const later = new Date(Date.now() + 60_000).toISOString();
    const entry = { attempt: 1, at, status: 500, duration_ms: 5, error: null, response_snippet: null };
    await Promise.all(
      rows.map((d) =>
        store.recordAttempt(d, {
          status: 'retrying',
          attempts: 1,
          last_attempt_at: at,
          next_attempt_at: later,
          sweep_at: later,
          last_response_status: 500,
          last_error: null,
          entry,
        }),
      ),
    );
    return rows.length;
  }

  async function driveToEnd(shopId: string, id: string): Promise<RecoveryRecord | null> {
    for (let pages = 0; pages < 30; pages++) {
      const recovery = await deps.recoveries.get(shopId, id);
      if (recovery?.status !== 'running') return recovery;
      await continueRecovery(deps, recovery);
    }
    throw new Error('the recovery never ended');
  }

  it(
    "a second run that reads after the first run's deliveries failed an attempt takes them as its own",
    async () => {
      const { shopId, endpoint, events, current, still } = await pastFirstPage();
      // Run A: a slow run of page 2 has queued its events but not written the page…
      const slow = await recoverPage(still, endpoint, current);
      expect(slow.deliveries_queued).toBeGreaterThan(current.deliveries_queued);
      // …the consumer's first attempt at each of them fails (they are `retrying`)…
      expect(await firstAttemptsFail(shopId, endpoint.id, events)).toBeGreaterThan(0);
      // …and run B (the sweeper's nudge) works the same page: it finds run A's deliveries, this recovery's, in the
      // reads it makes anyway, and writes nothing but the page.
      const requests: string[] = [];
      const unobserve = observeTable(deps.db, (operation) => requests.push(operation));
      try {
        expect(await continueRecovery(still, current)).toBe('advanced');
      } finally {
        unobserve();
      }
      expect(requests.filter((op) => /Put|Update|Delete|Write/.test(op))).toEqual(['PutItem']);
      expect(await deps.recoveries.advance(current, slow)).toBe(false);
      expect(await deps.recoveries.get(shopId, current.id)).toMatchObject({
        deliveries_queued: slow.deliveries_queued,
        checked_through: slow.checked_through,
      });
      expect(await driveToEnd(shopId, current.id)).toMatchObject({ status: 'completed', deliveries_queued: EVENTS });
      expect(await queuedTwice(shopId, endpoint.id, events)).toEqual([]);
    },
    SLOW_TABLE_MS,
  );

  it(
    "two runs that read before either wrote: the loser reads again, takes the winner's deliveries (attempted since)",
    async () => {
      const { shopId, endpoint, events, current, still } = await pastFirstPage();
      // Run B reads its first step's deliveries (none yet), then waits before its writes until `release`.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let stepRead!: () => void;
      const bHasRead = new Promise<void>((r) => (stepRead = r));
      const held: CurrentDeliveryStore = {
        ofEvent: (s, e, ids) => deps.currentDeliveries.ofEvent(s, e, ids),
        ofEvents: async (s, ids, endpointId) => {
          const read = await deps.currentDeliveries.ofEvents(s, ids, endpointId);
          stepRead();
          return read;
        },
        replace: async (...args) => {
          await released;
          return deps.currentDeliveries.replace(...args);
        },
      };
      const runB = continueRecovery({ ...still, currentDeliveries: held }, current);
      await bHasRead;
      // Run A works the whole page and writes it; the consumer's first attempt at what it queued fails.
      const slow = await recoverPage(still, endpoint, current);
      expect(await deps.recoveries.advance(current, slow)).toBe(true);
      expect(await firstAttemptsFail(shopId, endpoint.id, events)).toBeGreaterThan(0);
      // Run B's writes: each loses to run A's (the marker moved since B read it), and B reads the event again.
      release();
      expect(await runB).toBe('lost');
      expect(await driveToEnd(shopId, current.id)).toMatchObject({ status: 'completed', deliveries_queued: EVENTS });
      expect(await queuedTwice(shopId, endpoint.id, events)).toEqual([]);
    },
    SLOW_TABLE_MS,
  );

  it(
    'a page whose run failed midway, worked again after its deliveries were attempted: still one delivery per event',
    async () => {
      const { shopId, endpoint, events, current, still } = await pastFirstPage();
      let replaced = 0;
      const crashing: CurrentDeliveryStore = {
        ofEvent: (s, e, ids) => deps.currentDeliveries.ofEvent(s, e, ids),
        ofEvents: (s, ids, endpointId) => deps.currentDeliveries.ofEvents(s, ids, endpointId),
        replace: async (...args) => {
          if (++replaced > 10) throw new Error('the worker died mid-page');
          return deps.currentDeliveries.replace(...args);
        },
      };
      await expect(continueRecovery({ ...still, currentDeliveries: crashing }, current)).rejects.toThrow('mid-page');
      expect(await firstAttemptsFail(shopId, endpoint.id, events)).toBeGreaterThan(0);
      // The stream's retry of the same record works the page again.
      expect(await continueRecovery(still, current)).toBe('advanced');
      expect(await driveToEnd(shopId, current.id)).toMatchObject({ status: 'completed', deliveries_queued: EVENTS });
      expect(await queuedTwice(shopId, endpoint.id, events)).toEqual([]);
    },
    SLOW_TABLE_MS,
  );
});
