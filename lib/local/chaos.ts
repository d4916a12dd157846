import { randomInt } from 'node:crypto';
import { ConfigError } from '../../shared/config';
import { Rng } from './rng';

/**
 * Chaos mode (LOCAL_CHAOS): the local stand-ins for SQS, the stream's event source and
 * EventBridge Scheduler do what AWS documents they may, as the simulation's do (sim/queue.ts,
 * sim/stream.ts; the names follow sim/faults.ts). The well-behaved stand-ins never duplicate,
 * reorder or delay anything, so without it nothing run on the local stack, the e2e tests
 * included, meets the at-least-once world the engine is built for.
 */
export interface ChaosSettings {
  /**
   * Every fault is drawn from it: the same value makes the same draws (docs/development.md says how
   * far a replay goes).
   */
  seed: number;
  /** Per SQS message received: a copy of it is handled too, at the same moment or up to `queueLateMs` later. */
  queueDuplicate: number;
  /** Per SQS message received: it is handled up to `queueLateMs` late, after messages sent after it. */
  queueLate: number;
  queueLateMs: number;
  /** Per stream batch the fan-out finished: it runs again, whole (an invocation that timed out after its work). */
  streamTwice: number;
  /**
   * Per EventBridge Scheduler wake-up (a sweep; a retry more than 15 minutes out at TIME_SCALE 1, which the queue's
   * delay cannot hold): it comes up to `scheduleLateMs` late. Shorter waits are queue delays: see `queueLate`.
   */
  scheduleLate: number;
  /** Default: the sweeper's grace, the window within which a late wake-up still beats the sweeper to it. */
  scheduleLateMs: number;
  /** Per scheduler wake-up: it comes twice, each at its own time within the window. */
  scheduleTwice: number;
}

type Knob = Exclude<keyof ChaosSettings, 'seed'>;

/**
 * The defaults: far more often than AWS does any of it, about the simulation's light-to-stormy levels, so a few
 * minutes of e2e tests meet every fault several times; rare enough that a stack stays usable by hand.
 */
export const CHAOS_DEFAULTS: Omit<ChaosSettings, 'seed' | 'scheduleLateMs'> = {
  queueDuplicate: 0.05,
  queueLate: 0.05,
  queueLateMs: 1000,
  streamTwice: 0.1,
  scheduleLate: 0.1,
  scheduleTwice: 0.05,
};

/** The faults, each drawn with the probability of its name. */
const FAULTS = ['queueDuplicate', 'queueLate', 'streamTwice', 'scheduleLate', 'scheduleTwice'] as const;
const PROBABILITIES: Knob[] = [...FAULTS];
const DURATIONS: Knob[] = ['queueLateMs', 'scheduleLateMs'];
const OFF = new Set(['', '0', 'off', 'false']);
const ON = new Set(['1', 'on', 'true']);

const invalid = (message: string): never => {
  throw new ConfigError(
    `LOCAL_CHAOS ${message} (expected 1, seed:<n>, or items such as seed:42,queueDuplicate:0.5; ` +
      'see docs/development.md)',
  );
};

/**
 * LOCAL_CHAOS's value: off (unset, empty, 0, off, false), on with a random seed (1, on, true),
 * or comma-separated `name:value` items, `seed:<n>` and any knob of ChaosSettings, the rest
 * defaulted. A malformed value is a ConfigError: the stack does not start.
 */
export function parseChaos(spec: string | undefined, defaults: { scheduleLateMs: number }): ChaosSettings | undefined {
  const value = (spec ?? '').trim();
  if (OFF.has(value.toLowerCase())) return undefined;
  const settings: ChaosSettings = { seed: randomInt(0, 2 ** 31), ...CHAOS_DEFAULTS, ...defaults };
  for (const item of value.split(',').map((i) => i.trim())) {
    if (ON.has(item.toLowerCase())) continue;
    const [name = '', raw = '', ...rest] = item.split(':').map((p) => p.trim());
    if (rest.length > 0 || raw === '') invalid(`item '${item}' is not name:value`);
    setKnob(settings, name, raw);
  }
  return settings;
}

/** One `name:value` item of LOCAL_CHAOS, checked for its knob's form. */
function setKnob(settings: ChaosSettings, name: string, raw: string): void {
  const n = Number(raw);
  if (name === 'seed') {
    if (!/^\d+$/.test(raw) || n >= 2 ** 31) invalid(`seed must be a whole number below 2^31, got '${raw}'`);
    settings.seed = n;
  } else if ((PROBABILITIES as string[]).includes(name)) {
    if (!/^\d+(\.\d+)?$/.test(raw) || n > 1) invalid(`${name} must be a probability from 0 to 1, got '${raw}'`);
    settings[name as Knob] = n;
  } else if ((DURATIONS as string[]).includes(name)) {
    if (!/^\d+$/.test(raw)) invalid(`${name} must be a whole number of milliseconds, got '${raw}'`);
    settings[name as Knob] = n;
  } else invalid(`has no knob '${name}' (${['seed', ...PROBABILITIES, ...DURATIONS].join(', ')})`);
}

/** The settings as LOCAL_CHAOS spells them: this value replays a run's draws with every knob as it was. */
export function chaosSpec(settings: ChaosSettings): string {
  const names: (keyof ChaosSettings)[] = ['seed', ...PROBABILITIES, ...DURATIONS];
  return names.map((name) => `${name}:${settings[name]}`).join(',');
}

/** How many of each fault a stack's stand-ins played: what its log says when it stops. */
export type ChaosTally = Record<(typeof FAULTS)[number], number>;
export const emptyTally = (): ChaosTally => ({
  queueDuplicate: 0,
  queueLate: 0,
  streamTwice: 0,
  scheduleLate: 0,
  scheduleTwice: 0,
});

/**
 * The faults of one stand-in (`part`), from a generator of its own: seeded from the run's seed
 * and the part's name, so one part's draws do not shift with how often another part draws.
 * Each fault played is counted in `tally`.
 */
export function chaosFor(settings: ChaosSettings, part: string, tally: ChaosTally = emptyTally()): ChaosDraws {
  let hash = 0x811c9dc5; // FNV-1a over the part's name
  for (const c of part) hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193);
  const rng = new Rng((settings.seed ^ hash) | 0);
  const s = settings;
  const played = (fault: keyof ChaosTally, happens: boolean) => {
    if (happens) tally[fault]++;
    return happens;
  };
  return {
    receive<T>(messages: T[]) {
      const now: T[] = [];
      const later: { message: T; afterMs: number }[] = [];
      // A receive's messages come in any order (standard queues keep none).
      for (const message of rng.shuffle(messages)) {
        if (played('queueLate', rng.chance(s.queueLate)))
          later.push({ message, afterMs: rng.int(1, Math.max(1, s.queueLateMs)) });
        else now.push(message);
        // Half the copies arrive while the first is still in work (SQS's visibility runs out, or two
        // servers hold the message); the rest after it is done (its delete was lost).
        if (played('queueDuplicate', rng.chance(s.queueDuplicate)))
          later.push({ message, afterMs: rng.chance(0.5) ? rng.int(0, 50) : rng.int(0, s.queueLateMs) });
      }
      return { now, later };
    },
    streamTwice: () => played('streamTwice', rng.chance(s.streamTwice)),
    wakeUps(delayMs: number) {
      const late = () => (played('scheduleLate', rng.chance(s.scheduleLate)) ? rng.int(0, s.scheduleLateMs) : 0);
      const first = delayMs + late();
      return played('scheduleTwice', rng.chance(s.scheduleTwice))
        ? [first, delayMs + rng.int(0, s.scheduleLateMs)]
        : [first];
    },
  };
}

/** What one stand-in asks chaos mode, each answer a fresh draw. */
export interface ChaosDraws {
  /** A receive's messages: those handled now, in their new order, and those (copies among them) handled later. */
  receive<T>(messages: T[]): { now: T[]; later: { message: T; afterMs: number }[] };
  /** Whether a stream batch that succeeded runs again. */
  streamTwice(): boolean;
  /** When a wake-up due in `delayMs` comes: once, maybe late, or twice. */
  wakeUps(delayMs: number): number[];
}
