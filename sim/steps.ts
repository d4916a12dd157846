import { AsyncLocalStorage } from 'node:async_hooks';
import type { Scheduler } from 'fast-check';
import type { SimClock } from './clock';
import type { Rng } from '../lib/local/rng';

/**
 * The run's steps. Every await the engine makes on the outside world (a table request, a queue
 * send, a POST to a receiver) passes a gate: a task of fast-check's scheduler, which releases
 * the gates one at a time in the order the seed gives. A released step runs alone (its table
 * request included) until it reaches its next gate, so the table sees the requests in the
 * scheduler's order and a seed replays the same run.
 */

/** A Lambda invocation (or an API call) in flight: what a gate knows of the code that reached it. */
export interface Invocation {
  id: number;
  name: string;
  /** Gates passed so far. */
  gates: number;
  /** Dies at this gate (never released: the code after it never runs), as a Lambda killed at an await. */
  killAt: number | null;
  killed: boolean;
  /** Faults of the table and the queue apply to it. */
  faults: boolean;
  /** What ends with it when it is killed (its open connections). */
  onKill: (() => void)[];
}

const current = new AsyncLocalStorage<Invocation>();
const never = new Promise<never>(() => {});

export class Killed {
  constructor(readonly invocation: Invocation) {}
}

export class Steps {
  readonly trace: string[] = [];
  /** Gates passed, by the first two words of their label (what a run spends its steps on). */
  readonly counts = new Map<string, number>();
  private inFlight = 0;
  private invocations = 0;

  constructor(
    private readonly scheduler: Scheduler,
    readonly clock: SimClock,
    readonly rng: Rng,
    private readonly shortTimers: () => number,
    private readonly start: number,
  ) {}

  log(line: string): void {
    const inv = current.getStore();
    const at = String(this.clock.now() - this.start).padStart(9);
    this.trace.push(`${at} ms  ${inv ? `${inv.name}#${inv.id}` : 'sim'}  ${line}`);
  }

  invocation(): Invocation | undefined {
    return current.getStore();
  }

  /** Waits for the scheduler to release this step; a killed invocation's steps never return. */
  async gate(label: string): Promise<void> {
    const inv = current.getStore();
    if (inv?.killed) return never;
    const kind = `${inv?.name ?? 'sim'} ${label.split(' ').slice(0, 2).join(' ')}`;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    await this.scheduler.schedule(Promise.resolve(), inv ? `${inv.name}#${inv.id} ${label}` : label);
    if (inv) {
      inv.gates++;
      if (inv.killed || (inv.killAt !== null && inv.gates >= inv.killAt)) {
        if (!inv.killed) {
          this.log(`KILLED before ${label}`);
          inv.killed = true;
          for (const end of inv.onKill.splice(0)) end();
        }
        return never;
      }
    }
    this.clock.tick(this.rng.int(0, 2));
    if (this.verbose) this.log(label);
  }

  /** Trace every step, not only faults and receipts (a single seed's replay). */
  verbose = false;

  /** Real input/output (DynamoDB Local) that the driver waits for before it releases the next step. */
  async io<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.idle?.();
    }
  }

  private idle: (() => void) | undefined;

  /**
   * Runs `fn` as an invocation of `name`: its gates carry its name, and it dies at gate `killAt`
   * (then this resolves to Killed, and nothing after that gate runs).
   */
  invoke<T>(name: string, fn: () => Promise<T>, opts: { killAt?: number | null; faults?: boolean } = {}) {
    const inv: Invocation = {
      id: ++this.invocations,
      name,
      gates: 0,
      killAt: opts.killAt ?? null,
      killed: false,
      faults: opts.faults ?? true,
      onKill: [],
    };
    let settle!: (v: T | Killed) => void;
    let fail!: (e: unknown) => void;
    const done = new Promise<T | Killed>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    current.run(inv, () => {
      fn().then(settle, fail);
    });
    // A killed invocation never settles: the driver reports it once nothing else can run.
    this.killedWatch.push({ inv, settle: () => settle(new Killed(inv)) });
    return done;
  }

  private killedWatch: { inv: Invocation; settle: () => void }[] = [];

  /** Lets the code released by the last step run until every path is at a gate, a sim timer or done. */
  async settle(): Promise<void> {
    for (let rounds = 0; ; rounds++) {
      while (this.inFlight > 0)
        await new Promise<void>((r) => {
          this.idle = r;
        });
      while (this.shortTimers() > 0) await new Promise((r) => setTimeout(r, 1));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      if (this.inFlight === 0 && this.shortTimers() === 0) break;
      if (rounds > 10_000) throw new Error('the run never settles');
    }
    // Killed invocations are over for whoever waits on them (Lambda's timeout ends them).
    const killed = this.killedWatch.filter((w) => w.inv.killed);
    this.killedWatch = this.killedWatch.filter((w) => !w.inv.killed);
    for (const w of killed) w.settle();
    if (killed.length > 0) await this.settle();
  }

  /** Runs steps and timers until nothing is left before `until` (sim ms); returns the steps run. */
  async runUntil(until: number, maxSteps = 200_000): Promise<number> {
    let steps = 0;
    for (;;) {
      await this.settle();
      if (this.scheduler.count() > 0) {
        if (++steps > maxSteps) throw new Error(`more than ${maxSteps} steps: a livelock?`);
        await this.scheduler.waitNext(1);
        continue;
      }
      const at = this.clock.peekAt();
      if (at === undefined || at > until) return steps;
      this.clock.takeNext()?.fire();
    }
  }
}
