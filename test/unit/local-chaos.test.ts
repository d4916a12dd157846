/**
 * Chaos mode's settings and draws (lib/local/chaos.ts): LOCAL_CHAOS's syntax, its replay value,
 * and draws that follow from the seed alone, per part.
 */
import { chaosFor, chaosSpec, CHAOS_DEFAULTS, parseChaos, type ChaosSettings } from '../../lib/local/chaos';
import { localChaos } from '../../lib/local/config';
import { ConfigError } from '../../shared/config';

const lateWindow = { scheduleLateMs: 1000 };
const settings = (spec: string) => parseChaos(spec, lateWindow) as ChaosSettings;

describe('LOCAL_CHAOS', () => {
  it('is off unset, empty, 0, off or false; on with a random seed and the defaults for 1, on or true', () => {
    for (const off of [undefined, '', ' ', '0', 'off', 'false', 'OFF'])
      expect(parseChaos(off, lateWindow)).toBeUndefined();
    for (const on of ['1', 'on', 'true']) {
      const s = settings(on);
      expect(s).toEqual({ seed: expect.any(Number), ...CHAOS_DEFAULTS, scheduleLateMs: 1000 });
      expect(Number.isInteger(s.seed) && s.seed >= 0 && s.seed < 2 ** 31).toBe(true);
    }
  });

  it('takes a seed and any knob as name:value items, the rest defaulted', () => {
    expect(settings('seed:42')).toEqual({ seed: 42, ...CHAOS_DEFAULTS, scheduleLateMs: 1000 });
    expect(settings('seed:7, queueDuplicate:0.5,scheduleLateMs:250 ,streamTwice:0')).toMatchObject({
      seed: 7,
      queueDuplicate: 0.5,
      scheduleLateMs: 250,
      streamTwice: 0,
      queueLate: CHAOS_DEFAULTS.queueLate,
    });
    // A knob alone turns chaos mode on, with a random seed.
    expect(settings('queueLate:1').queueLate).toBe(1);
  });

  it.each([
    ['seed:x', 'seed must be a whole number'],
    ['seed:-1', 'seed must be a whole number'],
    ['seed:2147483648', 'below 2^31'],
    ['queueDuplicate:1.5', 'queueDuplicate must be a probability'],
    ['queueLateMs:0.5', 'queueLateMs must be a whole number of milliseconds'],
    ['queueDuplicate', "item 'queueDuplicate' is not name:value"],
    ['seed:1:2', 'is not name:value'],
    ['loseMessages:1', "has no knob 'loseMessages'"],
    ['2', "item '2' is not name:value"],
  ])('refuses %s: %s', (spec, message) => {
    expect(() => parseChaos(spec, lateWindow)).toThrow(ConfigError);
    expect(() => parseChaos(spec, lateWindow)).toThrow(message);
  });

  it('spells its settings back as a value that parses to the same settings', () => {
    const s = settings('seed:99,queueLate:0.3,scheduleLateMs:5');
    expect(chaosSpec(s)).toBe(
      'seed:99,queueDuplicate:0.05,queueLate:0.3,streamTwice:0.1,scheduleLate:0.1,scheduleTwice:0.05,queueLateMs:1000,scheduleLateMs:5',
    );
    expect(parseChaos(chaosSpec(s), { scheduleLateMs: 1 })).toEqual(s);
  });

  it('comes from the stack option first, else the environment; the late window defaults to the sweep grace', () => {
    const variables = { TIME_SCALE: '0.5' };
    expect(localChaos({}, variables, { LOCAL_CHAOS: 'seed:3' })).toMatchObject({ seed: 3, scheduleLateMs: 30_000 });
    expect(localChaos({ chaos: 'seed:4' }, variables, { LOCAL_CHAOS: 'seed:3' })?.seed).toBe(4);
    expect(localChaos({ chaos: false }, variables, { LOCAL_CHAOS: 'seed:3' })).toBeUndefined();
    expect(localChaos({}, { TIME_SCALE: '0.001' }, { LOCAL_CHAOS: '1' })?.scheduleLateMs).toBe(1000);
    expect(localChaos({}, variables, {})).toBeUndefined();
  });
});

describe('chaos draws', () => {
  const ids = Array.from({ length: 200 }, (_, i) => i);
  const draw = (s: ChaosSettings, part: string) => {
    const d = chaosFor(s, part);
    return { receive: d.receive(ids), twice: ids.map(() => d.streamTwice()), wakeUps: ids.map(() => d.wakeUps(100)) };
  };

  it('follow from the seed and the part alone', () => {
    const s = settings('seed:42');
    expect(draw(s, 'queue:deliveries')).toEqual(draw(s, 'queue:deliveries'));
    expect(draw(s, 'queue:deliveries')).not.toEqual(draw(s, 'queue:ingest'));
    expect(draw(s, 'stream')).not.toEqual(draw(settings('seed:43'), 'stream'));
  });

  it('hand every received message over at least once: reordered, some late, some twice', () => {
    const { now, later } = chaosFor(settings('seed:1,queueDuplicate:0.3,queueLate:0.3,queueLateMs:500'), 'q').receive(
      ids,
    );
    const handed = [...now, ...later.map((l) => l.message)];
    expect(new Set(handed)).toEqual(new Set(ids));
    expect(handed.length).toBeGreaterThan(ids.length);
    expect(now).not.toEqual([...now].sort((a, b) => a - b));
    for (const l of later) expect(l.afterMs).toBeGreaterThanOrEqual(0);
    for (const l of later) expect(l.afterMs).toBeLessThanOrEqual(500);
    expect(new Set(now).size).toBe(now.length);
  });

  it('with every knob at 0 change nothing but the order', () => {
    const calm = settings('seed:5,queueDuplicate:0,queueLate:0,streamTwice:0,scheduleLate:0,scheduleTwice:0');
    const d = chaosFor(calm, 'any');
    const { now, later } = d.receive(ids);
    expect([...now].sort((a, b) => a - b)).toEqual(ids);
    expect(later).toEqual([]);
    expect(ids.some(() => d.streamTwice())).toBe(false);
    expect(d.wakeUps(100)).toEqual([100]);
  });

  it('wake a scheduled message once or twice, never early, at most the window late', () => {
    const d = chaosFor(settings('seed:9,scheduleLate:0.5,scheduleTwice:0.5,scheduleLateMs:300'), 'scheduler');
    const all = ids.map(() => d.wakeUps(100));
    expect(all.some((w) => w.length === 2)).toBe(true);
    expect(all.some((w) => w.length === 1 && (w[0] as number) > 100)).toBe(true);
    for (const w of all) for (const at of w) expect(at >= 100 && at <= 400).toBe(true);
  });
});
