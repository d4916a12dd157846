import { liveLease } from './circuit';
import { sweepGraceMs } from './policy';
import type { DeliveryMessage, DeliveryQueue, DeliveryRecord } from './records';
import type { DeliveryStatus } from './status';
import { admitInOrder, chainMember, repairHeld, type OrderStore } from './resource-order';
import type { EndpointRecord } from '../domain/webhook-endpoints';
import type { DeliveryDeadLetters } from './dead-letters';

/** An open delivery as the due index holds it: enough to wake it. */
export interface DueEntry {
  shop_id: string;
  event_id: string;
  id: string;
  endpoint_id: string;
  attempts: number;
  status: DeliveryStatus;
  /** The index position it was found at; a postpone only moves an entry still there. */
  sweep_key: string;
  /** Null while the row is held behind an earlier delivery of its resource (./resource-order.ts). */
  next_attempt_at?: string | null;
}

export interface DueIndex {
  /** Open deliveries whose sweep time is at or before `cutoff`, oldest first, at most `limit` per bucket. */
  overdue(cutoff: Date, limit: number): Promise<DueEntry[]>;
  /** Moves the entry's sweep time on, only if the row has not moved on by itself; false when it has. */
  postpone(entry: DueEntry, sweepAt: Date): Promise<boolean>;
  /**
   * Takes an open row on its fast path into the index at `sweepAt` (./dead-letters.ts); false
   * when it is there already or ended.
   */
  enter(ref: { shop_id: string; event_id: string; id: string; endpoint_id: string }, sweepAt: Date): Promise<boolean>;
  /** The rows of these entries, by delivery id (absent: gone). */
  rows(entries: DueEntry[]): Promise<Map<string, DeliveryRecord>>;
}

export interface SweepDeps {
  due: DueIndex;
  /** The delivery queue's dead-letter queue, drained into the due index before each sweep (./dead-letters.ts). */
  deadLetters?: DeliveryDeadLetters;
  /** The chains of ordered endpoints: held rows are released or left held, never sent behind an open one. */
  order: OrderStore;
  endpoints: { getMany(refs: { shop_id: string; endpoint_id: string }[]): Promise<Map<string, EndpointRecord>> };
  queue: DeliveryQueue;
  timeScale: number;
  now: () => Date;
}

export interface SweepReport {
  found: number;
  enqueued: number;
  /** Being attempted right now (a live lease on the endpoint). */
  inFlight: number;
}

const PAGE = 200;
/** Messages per queue send (SendMessageBatch takes ten). */
const SEND_BATCH = 10;
/**
 * A swept delivery is looked at again after this many graces if it is still not done (its
 * message lost again), and never sooner than RESWEEP_MIN_MS: at a small TIME_SCALE a backlog
 * takes longer to drain than a few graces, and sweeping it again would only add duplicates.
 */
const RESWEEP_GRACES = 5;
export const RESWEEP_MIN_MS = 10_000;
export const resweepMs = (timeScale: number) => Math.max(RESWEEP_GRACES * sweepGraceMs(timeScale), RESWEEP_MIN_MS);

/**
 * The delivery row is the truth; this finds rows nobody woke. Every open row off its fast
 * path sits in the due index at its sweep time (due time, plus a grace when a message or
 * schedule should wake it); a fast-path row's lost message comes back through the delivery
 * dead-letter queue (./dead-letters.ts). Rows past it with no attempt in flight go back on the queue, after their
 * sweep time is moved on with a conditional write: a row swept twice is still attempted
 * once (the consumer records attempt N only over N-1). `horizonMs` looks ahead: at the
 * start of the local stack, whose queue and timers died with it, every due row is lost.
 */
export async function sweep(
  deps: SweepDeps,
  opts: { horizonMs?: number; budgetMs?: number } = {},
): Promise<SweepReport> {
  const started = Date.now();
  const report: SweepReport = { found: 0, enqueued: 0, inFlight: 0 };
  // One cutoff for the whole run: what it moves on lands past it, so a long run never sweeps a row twice.
  const cutoff = new Date(deps.now().getTime() + (opts.horizonMs ?? 0));
  for (;;) {
    const now = deps.now();
    const entries = await deps.due.overdue(cutoff, PAGE);
    if (entries.length === 0) return report;
    report.found += entries.length;
    const endpoints = await deps.endpoints.getMany(entries);
    const rows = await orderedRows(deps, entries, endpoints);
    const resweepAt = new Date(Math.max(now.getTime() + resweepMs(deps.timeScale), cutoff.getTime() + 1));
    const messages: DeliveryMessage[] = [];
    let stillHeld = 0;
    // Each row goes on the queue as soon as its postpone is written, ten at a time (one
    // SendMessageBatch): after a restart the first deliveries go out while the page's other
    // postpones are still being written, not after all of them.
    const sending: Promise<void>[] = [];
    let ready: DeliveryMessage[] = [];
    const flush = () => {
      sending.push(deps.queue.send(ready));
      ready = [];
    };
    await Promise.all(
      entries.map(async (e) => {
        const endpoint = endpoints.get(`${e.shop_id}/${e.endpoint_id}`);
        if (endpoint && liveLease(endpoint, e.id, now.getTime())) {
          report.inFlight++;
          return;
        }
        const order = await inOrder(deps, rows.get(e.id));
        if (order === 'held' && (await deps.due.postpone(e, resweepAt))) stillHeld++;
        if (order !== 'send') return;
        if (await deps.due.postpone(e, resweepAt)) {
          const message = {
            shop_id: e.shop_id,
            event_id: e.event_id,
            delivery_id: e.id,
            endpoint_id: e.endpoint_id,
            attempt: e.attempts + 1,
          };
          messages.push(message);
          ready.push(message);
          if (ready.length === SEND_BATCH) flush();
        }
      }),
    );
    if (ready.length > 0) flush();
    await Promise.all(sending);
    report.enqueued += messages.length;
    // Rows in flight stay where they are; stop when a page holds nothing else to move.
    if (messages.length + stillHeld === 0 || entries.length < PAGE || Date.now() - started > (opts.budgetMs ?? 40_000))
      return report;
  }
}

/**
 * The rows the order decides for: held ones (`next_attempt_at` null in the index), and those of
 * an ordered endpoint never attempted (their fan-out may have stopped before their chain).
 */
async function orderedRows(
  deps: SweepDeps,
  entries: DueEntry[],
  endpoints: Map<string, EndpointRecord>,
): Promise<Map<string, DeliveryRecord>> {
  const ordered = entries.filter(
    (e) =>
      e.next_attempt_at === null ||
      (e.attempts === 0 && endpoints.get(`${e.shop_id}/${e.endpoint_id}`)?.ordering === 'per_resource'),
  );
  return ordered.length > 0 ? deps.due.rows(ordered) : new Map();
}

/**
 * An ordered row the sweeper met: a held one is released when nothing open is ahead of it any
 * more (`done`: the release sent its message) or stays `held`; one never attempted joins its
 * chain first, and is sent (`send`) or was held by that (`done`). Any other row: `send`.
 */
async function inOrder(deps: SweepDeps, row: DeliveryRecord | undefined): Promise<'send' | 'held' | 'done'> {
  const member = row ? chainMember(row) : null;
  if (!row || !member) return 'send';
  if (row.held_by) return (await repairHeld(deps, row)) ? 'done' : 'held';
  if (row.attempts > 0) return 'send';
  return (await admitInOrder(deps, member)) === 'send' ? 'send' : 'done';
}
