import { logger } from '../../shared/logger';
import type { ChaosDraws } from './chaos';

export interface LocalSweeper {
  stop(): Promise<void>;
}

/**
 * The sweeper's schedule, locally: once at start, looking `startupHorizonMs` ahead (the
 * local queue and its timers died with the last run, so every due delivery is lost), then
 * every `intervalMs`, one run at a time (chaos mode adds its second runs beside them).
 */
export function startLocalSweeper(opts: {
  run: (event: { horizon_ms?: number }) => Promise<unknown>;
  intervalMs: number;
  startupHorizonMs: number;
  /** Chaos mode (./chaos.ts): as EventBridge Scheduler may, a run comes late, or twice (the second beside the next). */
  chaos?: ChaosDraws;
}): LocalSweeper {
  let running = true;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  // Chaos mode's second runs: each beside the regular ones, as two invocations of one schedule may overlap.
  const extraRuns = new Set<Promise<void>>();
  const extraTimers = new Set<NodeJS.Timeout>();
  const runOnce = async (event: { horizon_ms?: number }) => {
    try {
      await opts.run(event);
    } catch (err) {
      logger.error('Local sweep failed', { error: err as Error });
    }
  };
  const loop = async () => {
    await runOnce({ horizon_ms: opts.startupHorizonMs });
    while (running) {
      const [next = opts.intervalMs, again] = opts.chaos?.wakeUps(opts.intervalMs) ?? [opts.intervalMs];
      if (again !== undefined) {
        const timer = setTimeout(() => {
          extraTimers.delete(timer);
          const run = runOnce({});
          extraRuns.add(run);
          void run.finally(() => extraRuns.delete(run));
        }, again);
        extraTimers.add(timer);
      }
      await pause(next);
      if (running) await runOnce({});
    }
  };
  const done = loop();
  return {
    stop: async () => {
      running = false;
      wake?.();
      for (const timer of extraTimers) clearTimeout(timer);
      await done;
      await Promise.all(extraRuns);
    },
  };
}
