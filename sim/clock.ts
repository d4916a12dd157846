/**
 * Simulated time. The engine reads the time through `Date` (its `now` ports and a few direct
 * reads), so a run replaces `Date` with one that reads this clock: the schedule of days (1 min
 * to 24 h, the 3-day disable) passes in as many steps as it has wake-ups, not in real time.
 * Time moves only when the driver moves it: a little at each step, and to the next timer when
 * nothing is left to run.
 */
interface Timer {
  at: number;
  order: number;
  label: string;
  fire: () => void;
}

export class SimClock {
  private time: number;
  private order = 0;
  private timers: Timer[] = [];

  constructor(start: number) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  /** Moves the clock forward by `ms` (never back). */
  tick(ms: number): void {
    this.time += Math.max(0, ms);
  }

  /** Calls `fire` when the clock reaches `at` (at once, at the next idle moment, if `at` has passed). */
  at(at: number, label: string, fire: () => void): void {
    this.timers.push({ at: Math.max(at, this.time), order: this.order++, label, fire });
  }

  sleep(ms: number, label: string): Promise<void> {
    return new Promise((resolve) => this.at(this.time + ms, label, resolve));
  }

  /** Removes and returns the earliest timer (ties in the order they were set), or undefined. */
  takeNext(): Timer | undefined {
    if (this.timers.length === 0) return undefined;
    let best = 0;
    for (let i = 1; i < this.timers.length; i++) {
      const t = this.timers[i] as Timer;
      const b = this.timers[best] as Timer;
      if (t.at < b.at || (t.at === b.at && t.order < b.order)) best = i;
    }
    const [next] = this.timers.splice(best, 1);
    if (next && next.at > this.time) this.time = next.at;
    return next;
  }

  peekAt(): number | undefined {
    return this.timers.reduce<number | undefined>(
      (min, t) => (min === undefined || t.at < min ? t.at : min),
      undefined,
    );
  }
}

const RealDate = Date;

/** Makes `new Date()` and `Date.now()` read `clock` until the returned undo is called. */
export function installSimDate(clock: SimClock): () => void {
  class SimDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(clock.now());
      else super(...(args as [string]));
    }
    static override now(): number {
      return clock.now();
    }
  }
  globalThis.Date = SimDate as DateConstructor;
  return () => {
    globalThis.Date = RealDate;
  };
}

/**
 * Real timers of up to `SHORT_MS` (a store's back-off after a throttle) are work in progress:
 * the driver waits for them before it picks the next step, so they stay inside the step that
 * set them. Longer ones (an SDK request's timeout, cleared when it answers) are not waited for.
 */
const SHORT_MS = 2_000;

export function trackShortTimers(): { pending: () => number; undo: () => void } {
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const tracked = new Set<unknown>();
  const patchedSet = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if ((ms ?? 0) > SHORT_MS) return realSet(fn, ms, ...args);
    const handle: unknown = realSet(() => {
      tracked.delete(handle);
      fn(...args);
    }, ms);
    tracked.add(handle);
    return handle;
  }) as typeof setTimeout;
  globalThis.setTimeout = patchedSet;
  globalThis.clearTimeout = ((handle: Parameters<typeof clearTimeout>[0]) => {
    tracked.delete(handle);
    realClear(handle);
  }) as typeof clearTimeout;
  return {
    pending: () => tracked.size,
    undo: () => {
      globalThis.setTimeout = realSet;
      globalThis.clearTimeout = realClear;
    },
  };
}
