import fc from 'fast-check';
import { BEHAVIOURS, type Behaviour } from './receivers';

/** One endpoint of a run: how its receiver behaves and what it asked for. */
export interface EndpointPlan {
  behaviour: Behaviour;
  /** When a down receiver comes back, or a gone one starts answering 410 (ms after the start). */
  turnAfterMs: number;
  ordered: boolean;
  rateLimit: number | null;
  /** Only emergencies of the job events (and every call.completed). */
  filtered: boolean;
}

export type Action = { atMs: number } & (
  | { kind: 'call'; jobs: number; emergency: boolean }
  | { kind: 'approve'; job: number }
  | { kind: 'redeliver'; event: number; endpoint: number | null }
  | { kind: 'recover'; endpoint: number }
  | { kind: 'disable' | 'enable' | 'delete' | 'rotate'; endpoint: number }
  | { kind: 'rate'; endpoint: number; rateLimit: number | null }
  /** Disabled, a call comes in, and enabled again `forMs` later: often before the stream fans the call out. */
  | { kind: 'pause'; endpoint: number; forMs: number }
);

/** A run: its endpoints, what happens when, the consumer's concurrency, and the seed of every fault and delay. */
export interface Workload {
  endpoints: EndpointPlan[];
  actions: Action[];
  concurrency: number;
  seed: number;
  /** Pauses, besides the actions (`workloadWithPauseArb`). */
  pauses?: Extract<Action, { kind: 'pause' }>[];
}

const endpointPlan: fc.Arbitrary<EndpointPlan> = fc.record({
  behaviour: fc.constantFrom(...BEHAVIOURS),
  turnAfterMs: fc.integer({ min: 0, max: 12 * 60_000 }),
  ordered: fc.boolean(),
  rateLimit: fc.option(fc.integer({ min: 1, max: 5 }), { freq: 3 }),
  filtered: fc.boolean(),
});

const at = fc.integer({ min: 0, max: 6 * 60_000 });
const index = fc.nat(15);
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ atMs: at, kind: fc.constant('call' as const), jobs: fc.nat(2), emergency: fc.boolean() }),
  },
  { weight: 5, arbitrary: fc.record({ atMs: at, kind: fc.constant('approve' as const), job: index }) },
  {
    weight: 2,
    arbitrary: fc.record({
      atMs: at,
      kind: fc.constant('redeliver' as const),
      event: index,
      endpoint: fc.option(index),
    }),
  },
  { weight: 1, arbitrary: fc.record({ atMs: at, kind: fc.constant('recover' as const), endpoint: index }) },
  {
    weight: 3,
    arbitrary: fc.record({
      atMs: at,
      kind: fc.constantFrom('disable' as const, 'enable' as const, 'delete' as const, 'rotate' as const),
      endpoint: index,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      atMs: at,
      kind: fc.constant('rate' as const),
      endpoint: index,
      rateLimit: fc.option(fc.integer({ min: 1, max: 1000 })),
    }),
  },
);

const fields = {
  endpoints: fc.array(endpointPlan, { minLength: 1, maxLength: 4 }),
  actions: fc.array(action, { minLength: 2, maxLength: 10 }),
  concurrency: fc.integer({ min: 1, max: 4 }),
  seed: fc.integer(),
};

export const workloadArb: fc.Arbitrary<Workload> = fc.record(fields);

/**
 * The same workloads with a pause each, drawn after the other fields: for a seed, those are
 * the ones `workloadArb` draws.
 */
export const workloadWithPauseArb: fc.Arbitrary<Workload> = fc.record({
  ...fields,
  pauses: fc.tuple(
    fc.record({
      atMs: at,
      kind: fc.constant('pause' as const),
      endpoint: index,
      forMs: fc.integer({ min: 0, max: 1_000 }),
    }),
  ),
});
