import type { SimCase } from '../../sim/simulate';
import { broken, runCases } from './harness';

/**
 * Runs the simulation found breaking a promise, each kept with the workload it found (the seed
 * gives the same interleaving and faults), after the fix that made it pass.
 */
const FOUND: (SimCase & { what: string })[] = [
  {
    what: 'a duplicate message acknowledged while its first copy was in flight, whose worker then died (a lost delivery)',
    seed: 14,
    workload: {
      endpoints: [
        { behaviour: 'down-then-back', turnAfterMs: 542476, ordered: false, rateLimit: 4, filtered: false },
        { behaviour: 'gone-later', turnAfterMs: 719996, ordered: true, rateLimit: 3, filtered: false },
        { behaviour: 'down-then-back', turnAfterMs: 10, ordered: false, rateLimit: 2, filtered: true },
      ],
      actions: [
        { atMs: 133338, kind: 'call', jobs: 2, emergency: false },
        { atMs: 215053, kind: 'disable', endpoint: 1 },
        { atMs: 264162, kind: 'rate', endpoint: 11, rateLimit: null },
        { atMs: 6, kind: 'call', jobs: 1, emergency: true },
      ],
      concurrency: 3,
      seed: 780539688,
    },
  },
  {
    what: 'a fan-out retry that skipped the row its first try wrote for an endpoint disabled since (pending for ever)',
    seed: 62,
    workload: {
      endpoints: [
        { behaviour: 'gone-later', turnAfterMs: 340724, ordered: true, rateLimit: null, filtered: true },
        { behaviour: 'healthy', turnAfterMs: 342282, ordered: false, rateLimit: 3, filtered: false },
        { behaviour: 'gone-later', turnAfterMs: 160195, ordered: false, rateLimit: 3, filtered: false },
        { behaviour: 'gone-later', turnAfterMs: 118261, ordered: true, rateLimit: 5, filtered: true },
      ],
      actions: [
        { atMs: 251966, kind: 'call', jobs: 2, emergency: true },
        { atMs: 99963, kind: 'call', jobs: 2, emergency: false },
      ],
      concurrency: 3,
      seed: -1484104960,
    },
  },
  {
    what: 'a fan-out retry that left an indexed ordered row out of its chain (job.approved before job.created)',
    seed: 176,
    workload: {
      endpoints: [
        { behaviour: 'slow', turnAfterMs: 16, ordered: true, rateLimit: 4, filtered: true },
        { behaviour: 'flaky', turnAfterMs: 319369, ordered: true, rateLimit: 1, filtered: false },
        { behaviour: 'down-then-back', turnAfterMs: 1, ordered: false, rateLimit: 1, filtered: false },
      ],
      actions: [
        { atMs: 113934, kind: 'call', jobs: 1, emergency: false },
        { atMs: 255910, kind: 'approve', job: 6 },
        { atMs: 248446, kind: 'enable', endpoint: 8 },
        { atMs: 244666, kind: 'rotate', endpoint: 12 },
        { atMs: 105873, kind: 'approve', job: 9 },
        { atMs: 233116, kind: 'call', jobs: 2, emergency: true },
        { atMs: 237122, kind: 'recover', endpoint: 13 },
        { atMs: 236978, kind: 'approve', job: 15 },
        { atMs: 34673, kind: 'call', jobs: 2, emergency: false },
        { atMs: 357502, kind: 'call', jobs: 2, emergency: false },
      ],
      concurrency: 1,
      seed: 342829720,
    },
  },
  {
    what: "a duplicate's deferral whose write failed before the batch read its verdict (an unhandled rejection)",
    seed: 1422,
    workload: {
      endpoints: [
        { behaviour: 'slow', turnAfterMs: 678366, ordered: false, rateLimit: 4, filtered: true },
        { behaviour: 'flaky', turnAfterMs: 303204, ordered: false, rateLimit: 1, filtered: false },
        { behaviour: 'slow', turnAfterMs: 114026, ordered: true, rateLimit: 5, filtered: false },
        { behaviour: 'healthy', turnAfterMs: 676001, ordered: true, rateLimit: null, filtered: true },
      ],
      actions: [
        { atMs: 5, kind: 'call', jobs: 1, emergency: true },
        { atMs: 4, kind: 'call', jobs: 0, emergency: true },
        { atMs: 14, kind: 'recover', endpoint: 14 },
      ],
      concurrency: 3,
      seed: -7,
    },
  },
  {
    what: 'a fan-out retry that woke a row its first try wrote unrecorded for its second attempt (sent early)',
    seed: 320,
    workload: {
      endpoints: [
        { behaviour: 'down-then-back', turnAfterMs: 336601, ordered: true, rateLimit: null, filtered: false },
        { behaviour: 'gone-later', turnAfterMs: 264339, ordered: true, rateLimit: 4, filtered: false },
        { behaviour: 'flaky', turnAfterMs: 239597, ordered: false, rateLimit: 2, filtered: true },
        { behaviour: 'down-then-back', turnAfterMs: 313187, ordered: false, rateLimit: 3, filtered: false },
      ],
      actions: [
        { atMs: 290354, kind: 'approve', job: 4 },
        { atMs: 266459, kind: 'call', jobs: 2, emergency: true },
        { atMs: 76065, kind: 'rotate', endpoint: 5 },
        { atMs: 236239, kind: 'call', jobs: 0, emergency: true },
        { atMs: 315409, kind: 'approve', job: 1 },
        { atMs: 58114, kind: 'call', jobs: 2, emergency: false },
        { atMs: 37375, kind: 'call', jobs: 0, emergency: true },
        { atMs: 285745, kind: 'call', jobs: 0, emergency: false },
        { atMs: 198869, kind: 'call', jobs: 2, emergency: true },
      ],
      concurrency: 4,
      seed: -2147483620,
    },
  },
];

describe('runs the simulation found breaking a promise (kept as regressions)', () => {
  it.each(FOUND)(
    'seed $seed: $what',
    async (c) => {
      expect(broken(await runCases([c]))).toEqual([]);
    },
    60_000,
  );
});
