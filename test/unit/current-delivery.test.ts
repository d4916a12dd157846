import {
  planFor,
  queueAgain,
  type CurrentDeliveryStore,
  type EventDeliveries,
} from '../../shared/delivery/current-delivery';
import { newDelivery } from '../../shared/delivery/fan-out';
import { type DeliveryRecord } from '../../shared/delivery/records';
import type { DeliveryStatus } from '../../shared/delivery/status';
import { newEvent } from '../../shared/domain/events';

const at = new Date('2026-11-22T10:00:00.000Z');
const event = newEvent('shop_a', 'call.completed', { id: 'call_1' }, at);
const row = (id: string, status: DeliveryStatus, attempts: number, endpointId = 'we_1'): DeliveryRecord => ({
  ...newDelivery(event, { id, endpointId, origin: 'redeliver', now: at }),
  status,
  attempts,
});
const seen = (rows: DeliveryRecord[], current: Record<string, string> = {}): EventDeliveries => ({
  rows,
  current: new Map(Object.entries(current)),
});

describe('what a redeliver or recover does for one endpoint', () => {
  it.each<[string, EventDeliveries, boolean, ReturnType<typeof planFor>]>([
    [
      'nothing yet: a new delivery, first to claim the marker',
      seen([]),
      false,
      { kind: 'replace', expected: null, cancel: [] },
    ],
    [
      "the fan-out's delivery not attempted yet: left to go out",
      seen([row('dlv_f', 'pending', 0)]),
      false,
      { kind: 'waiting', delivery: row('dlv_f', 'pending', 0) },
    ],
    [
      'the current one not attempted yet: shared',
      seen([row('dlv_a', 'pending', 0)], { we_1: 'dlv_a' }),
      false,
      { kind: 'waiting', delivery: row('dlv_a', 'pending', 0) },
    ],
    [
      'a retrying one: superseded',
      seen([row('dlv_f', 'retrying', 1)]),
      false,
      { kind: 'replace', expected: null, cancel: [row('dlv_f', 'retrying', 1)] },
    ],
    [
      'a retrying current one: superseded, the marker moved from it',
      seen([row('dlv_a', 'retrying', 2)], { we_1: 'dlv_a' }),
      false,
      { kind: 'replace', expected: 'dlv_a', cancel: [row('dlv_a', 'retrying', 2)] },
    ],
    [
      'received, for a redeliver: sent again',
      seen([row('dlv_a', 'succeeded', 1)], { we_1: 'dlv_a' }),
      false,
      { kind: 'replace', expected: 'dlv_a', cancel: [] },
    ],
    [
      'received, for a recover: nothing to do',
      seen([row('dlv_a', 'succeeded', 1), row('dlv_b', 'retrying', 1)]),
      true,
      { kind: 'received', by: [row('dlv_a', 'succeeded', 1)] },
    ],
    [
      'cancelled, its attempt under way answered 2xx, for a recover: nothing to do',
      seen([{ ...row('dlv_a', 'cancelled', 2), last_response_status: 204 }]),
      true,
      { kind: 'received', by: [{ ...row('dlv_a', 'cancelled', 2), last_response_status: 204 }] },
    ],
    [
      'cancelled after a 500, for a recover: sent again',
      seen([{ ...row('dlv_a', 'cancelled', 2), last_response_status: 500 }], { we_1: 'dlv_a' }),
      true,
      { kind: 'replace', expected: 'dlv_a', cancel: [] },
    ],
    [
      "another endpoint's deliveries do not count",
      seen([row('dlv_x', 'pending', 0, 'we_2'), row('dlv_y', 'succeeded', 1, 'we_2')], { we_2: 'dlv_x' }),
      true,
      { kind: 'replace', expected: null, cancel: [] },
    ],
    // Left by a fan-out that wrote its row after a redeliver had made another current: both go, one new replaces them.
    [
      'two open ones: both superseded',
      seen([row('dlv_f', 'pending', 0), row('dlv_a', 'pending', 0)], { we_1: 'dlv_a' }),
      false,
      { kind: 'replace', expected: 'dlv_a', cancel: [row('dlv_f', 'pending', 0), row('dlv_a', 'pending', 0)] },
    ],
  ])('%s', (_name, read, skipReceived, plan) => {
    expect(planFor(read, 'we_1', skipReceived)).toEqual(plan);
  });
});

describe('queueAgain', () => {
  /** A store where another request wins the first `losses` races: its row becomes the current one. */
  function racingStore(losses: number): CurrentDeliveryStore & { writes: number } {
    let state = seen([row('dlv_f', 'retrying', 1)]);
    const store = {
      writes: 0,
      ofEvent: async () => state,
      ofEvents: async (_shop: string, eventIds: readonly string[]) => new Map(eventIds.map((id) => [id, state])),
      replace: async (created: DeliveryRecord) => {
        store.writes++;
        if (store.writes <= losses) {
          // The winner's delivery was attempted already (it failed): this request must supersede it in turn.
          state = seen([{ ...row('dlv_f', 'retrying', 1), status: 'cancelled' }, row('dlv_winner', 'retrying', 1)], {
            we_1: 'dlv_winner',
          });
          return false;
        }
        state = seen([...state.rows, created], { we_1: created.id });
        return true;
      },
    };
    return store;
  }
  const opts = { skipReceived: false as const, sweepGraceMs: 60_000 };

  it('reads again after a lost race and supersedes what the winner made current', async () => {
    const store = racingStore(1);
    const queued = await queueAgain({ currentDeliveries: store, now: () => at }, event, 'we_1', opts);
    expect(queued).toMatchObject({
      kind: 'queued',
      created: true,
      delivery: { endpoint_id: 'we_1', status: 'pending', origin: 'redeliver' },
    });
    expect(store.writes).toBe(2);
  });

  it("with an id (a recovery's), a lost race to the row of that id takes it, attempted already", async () => {
    const store = racingStore(1);
    const queued = await queueAgain({ currentDeliveries: store, now: () => at }, event, 'we_1', {
      ...opts,
      skipReceived: true,
      id: 'dlv_winner',
    });
    expect(queued).toEqual({ kind: 'queued', delivery: row('dlv_winner', 'retrying', 1), created: false });
    expect(store.writes).toBe(1);
  });

  it("with an id, a row of that id already read is the call's whatever became of it: nothing is written", async () => {
    const store = racingStore(0);
    const mine = { ...row('dlv_mine', 'cancelled', 1) };
    const queued = await queueAgain(
      { currentDeliveries: store, now: () => at },
      event,
      'we_1',
      { ...opts, skipReceived: true, id: 'dlv_mine' },
      seen([mine, row('dlv_x', 'retrying', 1)], { we_1: 'dlv_x' }),
    );
    expect(queued).toEqual({ kind: 'queued', delivery: mine, created: false });
    expect(store.writes).toBe(0);
  });

  it('with an id, the row it writes has that id', async () => {
    const store = racingStore(0);
    const queued = await queueAgain({ currentDeliveries: store, now: () => at }, event, 'we_1', {
      ...opts,
      id: 'dlv_named',
    });
    expect(queued).toMatchObject({ kind: 'queued', created: true, delivery: { id: 'dlv_named' } });
  });

  it('gives up, loudly, after losing ten races in a row', async () => {
    await expect(
      queueAgain({ currentDeliveries: racingStore(100), now: () => at }, event, 'we_1', opts),
    ).rejects.toThrow(/lost 10 races/);
  });
});
