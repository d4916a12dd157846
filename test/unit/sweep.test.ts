import type { DeliveryMessage } from '../../shared/delivery/records';
import { RESWEEP_MIN_MS, sweep, type DueEntry, type DueIndex, type SweepDeps } from '../../shared/delivery/sweep';
import { deadLetteredMessage, drainDeadLetters, type DeliveryDeadLetters } from '../../shared/delivery/dead-letters';
import type { EndpointRecord } from '../../shared/domain/webhook-endpoints';
import { HEALTHY, type Lease } from '../../shared/delivery/circuit';
import { sweepGraceMs } from '../../shared/delivery/policy';
import { memoryOrder } from '../helpers/memory-order';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');

/** An in-memory due index with the adapter's semantics: sorted by sweep time, conditional postpone. */
function memoryIndex(entries: (DueEntry & { sweepAt: number })[], opts: { lostRace?: string[] } = {}) {
  const postponed: { id: string; to: number }[] = [];
  const index: DueIndex = {
    overdue: async (cutoff, limit) =>
      entries
        .filter((e) => e.sweepAt <= cutoff.getTime())
        .sort((a, b) => a.sweepAt - b.sweepAt)
        .slice(0, limit),
    postpone: async (entry, at) => {
      const row = entries.find((e) => e.id === entry.id);
      if (!row || opts.lostRace?.includes(entry.id)) return false;
      row.sweepAt = at.getTime();
      postponed.push({ id: entry.id, to: at.getTime() });
      return true;
    },
    enter: async (ref, at) => {
      if (entries.some((e) => e.id === ref.id)) return false;
      entries.push({
        ...ref,
        attempts: 0,
        status: 'pending',
        sweep_key: `${at.toISOString()}#${ref.id}`,
        sweepAt: at.getTime(),
      });
      return true;
    },
    rows: async () => new Map(),
  };
  return { index, postponed };
}

const entry = (id: string, sweepAt: number, attempts = 1): DueEntry & { sweepAt: number } => ({
  shop_id: 'shop_1',
  event_id: `evt_${id}`,
  id,
  endpoint_id: 'we_1',
  attempts,
  status: attempts === 0 ? 'pending' : 'retrying',
  sweep_key: `${new Date(sweepAt).toISOString()}#${id}`,
  sweepAt,
});

function deps(index: DueIndex, leases: Record<string, Lease> = {}) {
  const queued: DeliveryMessage[] = [];
  const endpoint = {
    id: 'we_1',
    shop_id: 'shop_1',
    health: HEALTHY,
    leases,
    lease_version: 1,
  } as unknown as EndpointRecord;
  const d: SweepDeps = {
    due: index,
    order: memoryOrder().store,
    endpoints: { getMany: async () => new Map([['shop_1/we_1', endpoint]]) },
    queue: { send: async (m) => void queued.push(...m) },
    timeScale: 1,
    now: () => new Date(NOW),
  };
  return { d, queued };
}

describe('sweeper decisions', () => {
  it('sends every row past its sweep time, for its next attempt, and none that is not yet due', async () => {
    const { index } = memoryIndex([entry('dlv_a', NOW - 5000, 2), entry('dlv_b', NOW), entry('dlv_c', NOW + 1)]);
    const { d, queued } = deps(index);
    const report = await sweep(d);
    expect(queued).toEqual([
      { shop_id: 'shop_1', event_id: 'evt_dlv_a', delivery_id: 'dlv_a', endpoint_id: 'we_1', attempt: 3 },
      { shop_id: 'shop_1', event_id: 'evt_dlv_b', delivery_id: 'dlv_b', endpoint_id: 'we_1', attempt: 2 },
    ]);
    expect(report).toEqual({ found: 2, enqueued: 2, inFlight: 0 });
  });

  it('postpones what it sends by five graces, so a backlog is not sent again every minute', async () => {
    const { index, postponed } = memoryIndex([entry('dlv_a', NOW - 1)]);
    const { d, queued } = deps(index);
    await sweep(d);
    await sweep(d);
    expect(queued).toHaveLength(1);
    expect(postponed).toEqual([{ id: 'dlv_a', to: NOW + 5 * sweepGraceMs(1) }]);
  });

  it(
    'never sweeps a row twice in one long run, and at a small ' +
      'TIME_SCALE waits at least 10 s before sweeping it again',
    async () => {
      const entries = Array.from({ length: 450 }, (_, i) => entry(`dlv_${String(i).padStart(3, '0')}`, NOW - 1000 + i));
      const { index, postponed } = memoryIndex(entries);
      let clock = NOW;
      const { d, queued } = deps(index);
      // Each page takes 5 s (a slow table): longer than five graces at TIME_SCALE 0.01 (3 s).
      const slow: SweepDeps = { ...d, timeScale: 0.01, now: () => new Date((clock += 2500)) };
      const report = await sweep(slow);
      expect(report).toEqual({ found: 450, enqueued: 450, inFlight: 0 });
      expect(new Set(queued.map((m) => m.delivery_id)).size).toBe(450);
      expect(Math.min(...postponed.map((p) => p.to)) - NOW).toBeGreaterThanOrEqual(RESWEEP_MIN_MS);
    },
  );

  it('leaves a row alone while an attempt of it is in flight, and sends it once its lease has expired', async () => {
    const { index } = memoryIndex([entry('dlv_a', NOW - 1), entry('dlv_b', NOW - 1)]);
    const { d, queued } = deps(index, {
      dlv_a: { taken: NOW - 15_000, until: NOW + 1, token: 't', probe: false },
      dlv_b: { taken: NOW - 15_000, until: NOW, token: 'u', probe: false },
    });
    expect(await sweep(d)).toEqual({ found: 2, enqueued: 1, inFlight: 1 });
    expect(queued.map((m) => m.delivery_id)).toEqual(['dlv_b']);
  });

  it('sends nothing for a row that moved on since it was read (another sweeper, or its own message)', async () => {
    const { index } = memoryIndex([entry('dlv_a', NOW - 1)], { lostRace: ['dlv_a'] });
    const { d, queued } = deps(index);
    expect(await sweep(d)).toMatchObject({ found: 1, enqueued: 0 });
    expect(queued).toEqual([]);
  });

  it('looks ahead by the horizon at a start (everything due is lost with the last run)', async () => {
    const { index } = memoryIndex([entry('dlv_a', NOW + 30_000), entry('dlv_b', NOW + 90_000)]);
    const { d, queued } = deps(index);
    await sweep(d, { horizonMs: 60_000 });
    expect(queued.map((m) => m.delivery_id)).toEqual(['dlv_a']);
  });

  it('pages through a large backlog in one run', async () => {
    const rows = Array.from({ length: 450 }, (_, i) => entry(`dlv_${String(i).padStart(3, '0')}`, NOW - 1000 + i));
    const { index } = memoryIndex(rows);
    const { d, queued } = deps(index);
    expect(await sweep(d)).toMatchObject({ found: 450, enqueued: 450 });
    expect(new Set(queued.map((m) => m.delivery_id)).size).toBe(450);
  });
  it('puts rows on the queue ten at a time as their postpones are written, not after the whole page', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => entry(`dlv_${String(i).padStart(2, '0')}`, NOW - 1000 + i));
    const { index } = memoryIndex(rows);
    // The last row's postpone is slow (a busy table): the first thirty must not wait for it.
    let slowWritten = false;
    const slow: DueIndex = {
      ...index,
      postpone: async (e, at) => {
        if (e.id === 'dlv_39') await new Promise((r) => setTimeout(r, 50)).then(() => (slowWritten = true));
        return index.postpone(e, at);
      },
    };
    const { d, queued } = deps(slow);
    const sends: { size: number; beforeSlow: boolean }[] = [];
    d.queue = { send: async (m) => void (sends.push({ size: m.length, beforeSlow: !slowWritten }), queued.push(...m)) };
    expect(await sweep(d)).toMatchObject({ found: 40, enqueued: 40 });
    expect(sends).toEqual([...Array(3).fill({ size: 10, beforeSlow: true }), { size: 10, beforeSlow: false }]);
  });
});

describe('the delivery dead-letter queue, drained before a sweep', () => {
  const letter = (id: string) =>
    JSON.stringify({ shop_id: 'shop_1', event_id: `evt_${id}`, delivery_id: id, endpoint_id: 'we_1', attempt: 1 });
  function deadLetters(bodies: string[]) {
    const waiting = bodies.map((body, i) => ({ receipt: `r${i}`, message: deadLetteredMessage(body) }));
    const removed: string[] = [];
    const queue: DeliveryDeadLetters = {
      receive: async () => waiting.splice(0, 10),
      remove: async (receipts) => void removed.push(...receipts),
    };
    return { queue, removed };
  }

  it(
    'puts each named row in the due index, due now, removes its message, ' +
      'and the sweep then sends it; a body naming no delivery stays',
    async () => {
      const { index } = memoryIndex([]);
      const { d, queued } = deps(index);
      const { queue, removed } = deadLetters([
        letter('dlv_lost'),
        'not json',
        '{"delivery_id":"dlv_x"}',
        ...Array.from({ length: 12 }, (_, i) => letter(`dlv_${i}`)),
      ]);
      expect(await drainDeadLetters({ ...d, deadLetters: queue })).toBe(13);
      expect(removed).toHaveLength(13);
      expect(removed).not.toContain('r1');
      expect(removed).not.toContain('r2');
      await sweep(d);
      expect(queued).toHaveLength(13);
      expect(queued).toContainEqual({
        shop_id: 'shop_1',
        event_id: 'evt_dlv_lost',
        delivery_id: 'dlv_lost',
        endpoint_id: 'we_1',
        attempt: 1,
      });
    },
  );

  it(
    'removes nothing when the row could not be written (the ' + 'table failed): the message stays for the next sweep',
    async () => {
      const { index } = memoryIndex([]);
      const { d } = deps({ ...index, enter: () => Promise.reject(new Error('throttled')) });
      const { queue, removed } = deadLetters([letter('dlv_lost')]);
      await expect(drainDeadLetters({ ...d, deadLetters: queue })).rejects.toThrow('throttled');
      expect(removed).toEqual([]);
    },
  );
});
