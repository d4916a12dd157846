import { derivedId, idTime, newId } from '../ids';
import { sweepGraceMs } from './policy';
import { queueAgain, type CurrentDeliveryStore, type Queued } from './current-delivery';
import { oneResourceAtATime, orderKeyFor, resourceOf } from './resource-order';
import { receives } from './fan-out';
import type { EventRecord } from '../domain/events';
import type { Page, PageRequest } from '../domain/pagination';
import type { RecoveryStatus } from './recovery-status';
import type { Resource } from '../domain/resources';
import type { EndpointRecord } from '../domain/webhook-endpoints';

/**
 * A recovery is durable work: the request answers after the window's first page, and the
 * record carries the rest, page by page, each page's write conditioned on the page count it
 * read. Whatever stops a page midway (a crash, a timeout), the page is worked again from the
 * same position: what it had queued is then found by its id (recoveredDeliveryId) and counted
 * again, not queued twice, whatever its attempts did meanwhile.
 */
export interface RecoveryRecord {
  id: string;
  shop_id: string;
  endpoint_id: string;
  since: string;
  until: string;
  status: RecoveryStatus;
  deliveries_queued: number;
  checked_through: string;
  /**
   * Where the next page of the window's events starts (an opaque store position); null before the
   * first page and after the last.
   */
  after: Record<string, unknown> | null;
  /** Pages written so far; every write is conditioned on the count read, so a page worked twice counts once. */
  pages: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** While running: when the sweeper wakes it if no page has been written by then; null once it has ended. */
  sweep_at: string | null;
}

export interface RecoveryStore {
  /** Writes a new recovery; one still running wakes the worker (through the table stream in AWS and locally). */
  create(recovery: RecoveryRecord): Promise<void>;
  get(shopId: string, id: string): Promise<RecoveryRecord | null>;
  /**
   * Writes `next` only if the stored one is still running at `current.pages`; false when another
   * run wrote first. A write that leaves it running wakes the worker again.
   */
  advance(current: RecoveryRecord, next: RecoveryRecord): Promise<boolean>;
  /** Running recoveries whose `sweep_at` has passed, oldest first (read from an index: may lag a write). */
  stalled(now: Date, limit: number): Promise<RecoveryRecord[]>;
  /** Moves `sweep_at` on, which wakes the worker, only if it is still running at `current.pages`. */
  nudge(current: RecoveryRecord, sweepAt: string): Promise<boolean>;
}

export interface RecoveryPageDeps {
  events: { listBetween(shopId: string, since: Date, until: Date, page: PageRequest): Promise<Page<EventRecord>> };
  currentDeliveries: CurrentDeliveryStore;
  timeScale: number;
  now: () => Date;
}

/**
 * A page is what one run works before it writes the recovery (the request before it answers, the
 * fan-out per stream record): at most RECOVERY_PAGE events, read RECOVERY_STEP at a time, and no step begun
 * after RUN_BUDGET_MS. The budget keeps a run short however slow the table is at the moment: the
 * request answers in time, and the stream records behind a page on its shard wait little.
 */
export const RECOVERY_PAGE = 100;
export const RUN_BUDGET_MS = 1_000;
/**
 * Events read by one Query and queued at once; what the endpoint has had of them is read in two
 * requests whatever their number (ofEvents).
 */
export const RECOVERY_STEP = 25;

/**
 * How long a running recovery may go without a page written before the sweeper wakes it. A
 * page takes about a second; waking it sooner would only have two runs work the same page.
 */
export const stallMs = (timeScale: number): number => Math.max(2 * sweepGraceMs(timeScale), 10_000);

export function newRecovery(endpoint: EndpointRecord, since: Date, until: Date, now: Date): RecoveryRecord {
  const at = now.toISOString();
  return {
    id: newId('rcv', now.getTime()),
    shop_id: endpoint.shop_id,
    endpoint_id: endpoint.id,
    since: since.toISOString(),
    until: until.toISOString(),
    status: 'running',
    deliveries_queued: 0,
    checked_through: since.toISOString(),
    after: null,
    pages: 0,
    created_at: at,
    updated_at: at,
    completed_at: null,
    sweep_at: null,
  };
}

/** As the fan-out decides now, and an endpoint is never told of its own disabling. */
function wouldReceive(endpoint: EndpointRecord, event: EventRecord): boolean {
  if (event.type === 'webhook_endpoint.disabled' && event.data.id === endpoint.id) return false;
  return receives(endpoint, event);
}

/**
 * The next page of the window: every event on it that the endpoint would be sent now and has
 * not received is queued to it (or found waiting), and the recovery as it is after the page.
 */
export async function recoverPage(
  deps: RecoveryPageDeps,
  endpoint: EndpointRecord,
  recovery: RecoveryRecord,
): Promise<RecoveryRecord> {
  const started = deps.now().getTime();
  let progress = recovery;
  let read = 0;
  do {
    const step = await recoverStep(deps, endpoint, progress);
    progress = step.recovery;
    read += step.read;
  } while (progress.status === 'running' && read < RECOVERY_PAGE && deps.now().getTime() - started < RUN_BUDGET_MS);
  const now = deps.now();
  const done = progress.status !== 'running';
  return {
    ...progress,
    pages: recovery.pages + 1,
    updated_at: now.toISOString(),
    completed_at: done ? now.toISOString() : null,
    sweep_at: done ? null : new Date(now.getTime() + stallMs(deps.timeScale)).toISOString(),
  };
}

/** The next RECOVERY_STEP events of the window, queued; the recovery's position, count and status after them. */
async function recoverStep(
  deps: RecoveryPageDeps,
  endpoint: EndpointRecord,
  recovery: RecoveryRecord,
): Promise<{ recovery: RecoveryRecord; read: number }> {
  const page = await deps.events.listBetween(recovery.shop_id, new Date(recovery.since), new Date(recovery.until), {
    limit: RECOVERY_STEP,
    after: recovery.after ?? undefined,
  });
  const wanted = page.items.filter(
    (e) => e.timestamp >= recovery.since && e.timestamp <= recovery.until && wouldReceive(endpoint, e),
  );
  const opts = { skipReceived: true, sweepGraceMs: sweepGraceMs(deps.timeScale) };
  // One resource's rows are written in the order of its events, so the stream hands them to their chain in that order.
  const outcomes: Queued[] = new Array(wanted.length);
  const seen = await deps.currentDeliveries.ofEvents(
    recovery.shop_id,
    wanted.map((e) => e.id),
    endpoint.id,
  );
  const settled = await oneResourceAtATime(
    wanted.map((e, i) => ({ e, i })),
    ({ e }) => (orderKeyFor(endpoint, e) ? resourceOf(e) : null),
    async ({ e, i }) => {
      outcomes[i] = await queueAgain(
        deps,
        e,
        endpoint.id,
        { ...opts, orderKey: orderKeyFor(endpoint, e), id: recoveredDeliveryId(recovery.id, e.id) },
        seen.get(e.id),
      );
    },
  );
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const done = !page.next;
  const last = page.items[page.items.length - 1];
  return {
    read: page.items.length,
    recovery: {
      ...recovery,
      status: done ? 'completed' : 'running',
      deliveries_queued: recovery.deliveries_queued + outcomes.filter((o) => queuedBy(recovery, o)).length,
      checked_through: done ? recovery.until : (last?.timestamp ?? recovery.checked_through),
      after: page.next ?? null,
    },
  };
}

/**
 * The id of the delivery a recovery queues for an event: derived from both, so that of two runs
 * of a page (a retry after a crash, a nudge beside a slow run) only one writes it, and the other
 * finds it by id, whatever its attempts did since (./current-delivery.ts). Its time is the
 * recovery's: the same for every run, and close to when the row is made.
 */
export const recoveredDeliveryId = (recoveryId: string, eventId: string): string =>
  derivedId('dlv', idTime(recoveryId), `${recoveryId}/${eventId}`);

/**
 * The event counts as queued by the recovery when this step queued it, found it waiting or found
 * the recovery's own row, and also when it found it received by a delivery that a redeliver or
 * recover made since the recovery began. The same page worked twice (a nudge beside a slow run,
 * a retry after a crash) finds the other run's rows by id, sent or not; another recovery of the
 * window finds them sent; either way, whichever run's write wins, the count must not depend on
 * how far the consumer had got.
 */
function queuedBy(recovery: RecoveryRecord, outcome: Queued): boolean {
  if (outcome.kind === 'queued') return true;
  return outcome.by.some((d) => d.origin === 'redeliver' && d.created_at >= recovery.created_at);
}

/**
 * Ended without finishing: its endpoint was disabled or deleted (what it queued is cancelled with
 * the endpoint's other deliveries).
 */
export function cancelled(recovery: RecoveryRecord, now: Date): RecoveryRecord {
  const at = now.toISOString();
  return {
    ...recovery,
    status: 'cancelled',
    after: null,
    pages: recovery.pages + 1,
    updated_at: at,
    completed_at: at,
    sweep_at: null,
  };
}

export function toRecoveryResource(r: RecoveryRecord): Resource<'recovery'> {
  return {
    object: 'recovery',
    id: r.id,
    endpoint_id: r.endpoint_id,
    since: r.since,
    until: r.until,
    status: r.status,
    deliveries_queued: r.deliveries_queued,
    checked_through: r.checked_through,
    created_at: r.created_at,
    completed_at: r.completed_at,
  };
}
