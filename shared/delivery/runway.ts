import type { Lease } from './circuit';
import type { DeliveryMessage, DeliveryRecord } from './records';
import type { Carried } from './ports';
import type { Source } from './endpoint-plan';
import type { EventRecord } from '../domain/events';
import type { EndpointRecord } from '../domain/webhook-endpoints';

/** One delivery of a batch, as read for its attempt. */
export interface Due {
  message: DeliveryMessage;
  delivery: DeliveryRecord;
  event: EventRecord;
}

/** How long a batch keeps passing an endpoint's slots on to its next due deliveries. */
export const RUNWAY_MS = 5_000;

/** What one batch shares across its endpoints and the deliveries it pulls from the table. */
export interface BatchContext {
  /** Deliveries this batch handles (its messages and those it pulled), so it never takes one twice. */
  taken: Set<string>;
  /** Until when (epoch ms) a freed slot passes on to the endpoint's next due delivery. */
  deadline: number;
  /**
   * When Lambda cuts the invocation off (epoch ms, on `Date.now()`'s clock, as Lambda's own timer
   * runs; Infinity where nothing does). A request starts only while its whole timeout, and its
   * record after it, fit before then (./send-attempt.ts).
   */
  endsAt: number;
  /** Work on pulled deliveries: the batch ends only when it has settled. */
  pulled: Promise<unknown>[];
  /**
   * Resolves once every endpoint of the batch has been admitted on. The writes that send
   * nothing (`circuit_open` records, deferrals, cancellations) wait for it, so the admissions,
   * and the requests behind them, are not queued behind bookkeeping at the table.
   */
  admissions: Promise<void>;
  /** One endpoint of the batch is admitted on (or gave up trying). */
  admitted(): void;
  /**
   * A success freed a slot of an endpoint whose deliveries wait for one: the batch takes them
   * from the table while its runway lasts, and hands them to the queue after (./deliver-batch.ts).
   */
  pull: (endpoint: EndpointRecord) => void;
}

export function newBatchContext(now: number, endsAt = Infinity): BatchContext {
  return {
    taken: new Set(),
    deadline: now + RUNWAY_MS,
    endsAt,
    pulled: [],
    admissions: Promise.resolve(),
    admitted: () => undefined,
    pull: () => undefined,
  };
}

/** The batch's endpoints are known: the bookkeeping waits until each of the `count` is admitted on. */
export function awaitAdmissions(ctx: BatchContext, count: number): void {
  let left = count;
  let open: () => void = () => undefined;
  ctx.admissions = left > 0 ? new Promise<void>((resolve) => (open = resolve)) : Promise.resolve();
  ctx.admitted = () => {
    if (--left === 0) open();
  };
}

/** Waits for the pulled work, including what that work pulled in turn. */
export async function settlePulled(ctx: BatchContext): Promise<void> {
  while (ctx.pulled.length > 0) await Promise.allSettled(ctx.pulled.splice(0));
}

/** One slot admitted on the endpoint, and the run of deliveries it carries in this batch. */
export interface Run {
  /** The delivery id its lease is stored under (the first of the run). */
  key: string;
  lease: Lease;
  ended: boolean;
  /** Under a rate limit: how long after its admission its request may start (./rate-window.ts). */
  startGrace?: number;
}

/**
 * One endpoint's admitted slots in this batch, each a run, and the deliveries of a healthy
 * endpoint that wait for a slot: a success passes its slot to the next one with no write
 * (no trip through the queue), recording its row alone; a failure, or the end of the
 * runway, sends the rest back (`giveBack`). A run that ends while others go on keeps its
 * slot and leaves it, with the stats of its row-only records, to the write that ends the
 * last run (`carried`): one endpoint write per batch, not one per delivery.
 */
export interface Runway<V> {
  readonly ctx: BatchContext;
  /** Where this runway's deliveries came from: pulled from the table, a success pulls again when they run out. */
  readonly source: Source;
  next(): Due | undefined;
  start(due: Due, run: Promise<V>): void;
  /** Sends one back: on the queue for a batch's own, left due on its row for a pulled one. */
  giveBack(due: Due): Promise<V>;
  flush(): void;
  verdict(id: string): Promise<V>;
  /** Ends a run (once): true when it was the last, whose write takes what the others carried. */
  endRun(run: Run): boolean;
  /** What runs leave for the last run's write: slots still held, attempts recorded on their rows alone. */
  readonly carried: Carried;
  /** A row-only record in flight, whose attempt joins `carried` once written. */
  recording(write: Promise<unknown>): void;
  /** For the last run's write: `carried`, once the records in flight are written; empties it. */
  take(): Promise<Carried>;
}

export interface RunwayOptions<V> {
  ctx: BatchContext;
  /** The deliveries the admission carried for the runs' slots, until `carryUntil` (epoch ms). */
  waiting: Due[];
  carryUntil: number;
  source: Source;
  /** How one goes back when no slot comes free for it. */
  giveBack: (due: Due) => Promise<V>;
  /** The slots admitted: one run each. */
  runs: number;
}

export function newRunway<V>({ ctx, waiting, carryUntil, source, giveBack, runs }: RunwayOptions<V>): Runway<V> {
  const starts = new Map<string, (run: Promise<V>) => void>();
  const outcomes = new Map(
    waiting.map((d) => [d.delivery.id, new Promise<V>((resolve) => starts.set(d.delivery.id, (run) => resolve(run)))]),
  );
  const settle = (id: string, run: Promise<V>) => starts.get(id)?.(run);
  const carried: Carried = {
    attempts: [],
    slots: [],
    deliveries: waiting.map((d) => d.delivery.id),
    carriedUntil: carryUntil,
  };
  const writes: Promise<unknown>[] = [];
  let running = runs;
  return {
    ctx,
    source,
    next: () => (Date.now() < ctx.deadline ? waiting.shift() : undefined),
    start: (due, run) => settle(due.delivery.id, run),
    giveBack,
    flush: () => waiting.splice(0).forEach((d) => settle(d.delivery.id, giveBack(d))),
    verdict: (id) => outcomes.get(id) as Promise<V>,
    endRun: (run) => {
      if (run.ended) return false;
      run.ended = true;
      return --running === 0;
    },
    carried,
    recording: (write) => void writes.push(write.catch(() => undefined)),
    take: async () => {
      await Promise.all(writes.splice(0));
      return {
        attempts: carried.attempts.splice(0),
        slots: carried.slots.splice(0),
        deliveries: carried.deliveries.splice(0),
        carriedUntil: carryUntil,
      };
    },
  };
}
