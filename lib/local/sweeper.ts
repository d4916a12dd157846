import { logger } from '../../shared/logger';

export interface LocalSweeper {
  stop(): Promise<void>;
}

/**
 * The sweeper's schedule, locally: once at start, looking `startupHorizonMs` ahead (the
 * local queue and its timers died with the last run, so every due delivery is lost), then
 * every `intervalMs`, one run at a time.
 */
export function startLocalSweeper(opts: {
  run: (event: { horizon_ms?: number }) => Promise<unknown>;
  intervalMs: number;
  startupHorizonMs: number;
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
  const loop = async () => {
    let event: { horizon_ms?: number } = { horizon_ms: opts.startupHorizonMs };
    while (running) {
      try {
        await opts.run(event);
      } catch (err) {
        logger.error('Local sweep failed', { error: err as Error });
      }
      event = {};
      if (running) await pause(opts.intervalMs);
    }
  };
  const done = loop();
  return {
    stop: async () => {
      running = false;
      wake?.();
      await done;
    },
  };
}
