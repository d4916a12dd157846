import type { Scheduler } from 'fast-check';
import * as z from 'zod/mini';
import { callIngestSchema } from '../shared/domain/call-ingest-schema';
import { ingestCall } from '../shared/domain/calls';
import { createShop } from '../shared/domain/shop';
import { SimApi } from './api';
import { installSimDate, SimClock, trackShortTimers } from './clock';
import { CALM, drawFaults, type FaultRates } from './faults';
import { checkRun, finalState, type Made, type Violation } from './invariants';
import { Rng } from '../lib/local/rng';
import { Killed, Steps } from './steps';
import type { SimTable } from './table-stream';
import type { Action, EndpointPlan, Workload } from './workload';
import { buildWorld, type World } from './world';

/**
 * A seed's run starts at the same instant on every replay, a week after the previous seed's: ids
 * are ULIDs from one monotonic source per process, so the runs of one process must not go back
 * in time (a run lasts at most its drain's four days).
 */
const EPOCH = Date.UTC(2026, 0, 5, 9, 0, 0);
const startOf = (seed: number) => EPOCH + (Math.abs(seed) % 10_000) * 7 * 24 * 3_600_000;
const ACTIVE_MS = 15 * 60_000;
const DRAIN_LIMIT_MS = 4 * 24 * 3_600_000;
const DRAIN_STEP_MS = 6 * 3_600_000;
/**
 * The sweeper runs every minute in AWS; here every one to four minutes while the workload runs
 * (each sweep is a dozen requests, and it is only the net: a later sweep changes when, not
 * whether), and every six hours in the drain (its net for what the workload's faults lost).
 */
const SWEEP_EVERY_MS = [60_000, 240_000] as const;

export interface RunReport {
  steps: number;
  faults: FaultRates;
  deliveries: number;
  receipts: number;
  duplicates: number;
  kills: number;
  violations: Violation[];
  trace: string[];
}

function callInput(shopId: string, n: number, jobs: number, emergency: boolean) {
  const started = new Date(Date.now() - 120_000).toISOString();
  return z.parse(callIngestSchema, {
    shop_id: shopId,
    external_id: `sim-call-${n}`,
    status: 'completed',
    from_number: '+15551230000',
    to_number: '+15559870000',
    caller_name: 'Sim Caller',
    started_at: started,
    ended_at: new Date().toISOString(),
    transcript: [{ speaker: 'agent', text: 'Hello', offset_ms: 0 }],
    jobs: Array.from({ length: jobs }, (_, i) => ({
      customer: { name: `Customer ${n}.${i}`, phone: '+15551239999', address: '1 Main St' },
      service: 'Leak repair',
      description: 'A leak under the sink',
      urgency: emergency ? 'emergency' : 'routine',
      requested_window: null,
    })),
  });
}

/**
 * The engine's chance drawn from the run's seed, so a replay takes the same path: the random part of every id
 * (ULIDs read crypto.getRandomValues) from `ids`, and `Math.random` (a deferral's jitter, a back-off) from `jitter`.
 */
function seedRandomness(ids: Rng, jitter: Rng): () => void {
  const real = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
  const realRandom = Math.random;
  globalThis.crypto.getRandomValues = (<T extends ArrayBufferView | null>(array: T): T => {
    if (array instanceof Uint8Array) for (let i = 0; i < array.length; i++) array[i] = ids.int(0, 255);
    else real(array as never);
    return array;
  }) as typeof globalThis.crypto.getRandomValues;
  Math.random = () => jitter.int(0, 2 ** 31 - 1) / 2 ** 31;
  return () => {
    globalThis.crypto.getRandomValues = real;
    Math.random = realRandom;
  };
}

async function perform(
  ctx: { steps: Steps; world: World; api: SimApi; made: Made; start: number },
  a: Action,
  n: number,
): Promise<void> {
  const { steps, world, api, made } = ctx;
  const ep = 'endpoint' in a && a.endpoint !== null ? made.endpoints[a.endpoint % made.endpoints.length] : undefined;
  const id: Record<string, string> = ep ? { id: ep.id } : {};
  const on = ep ? { endpoint: ep.name } : {};
  switch (a.kind) {
    case 'call': {
      const input = callInput(made.shopId, n, a.jobs, a.emergency);
      // The ingest queue retries a failed call until it is recorded (a retry records nothing twice).
      for (let tries = 0; tries < 20; tries++) {
        const out = await steps.invoke('ingest', () => ingestCall(world.deps, input)).catch((e: unknown) => e);
        if (out instanceof Killed || out instanceof Error) {
          await steps.clock.sleep(1_000 * (tries + 1), 'ingest retry');
          continue;
        }
        const result = out as Awaited<ReturnType<typeof ingestCall>>;
        made.jobs.push(...result.job_ids);
        made.events.push(...result.event_ids);
        for (const id of result.event_ids) made.eventAnswered.set(id, steps.clock.now());
        return;
      }
      throw new Error('a call was never recorded');
    }
    case 'approve': {
      const job = made.jobs[a.job % Math.max(1, made.jobs.length)];
      if (!job) return;
      const call = await api.call('approveJob', { id: job }, { version: 1 });
      if (call.status === 200) made.approved.set(job, call.end);
      return;
    }
    case 'redeliver': {
      const event = made.events[a.event % Math.max(1, made.events.length)];
      if (event) await api.call('redeliverEvent', { id: event }, ep ? { endpoint_ids: [ep.id] } : {}, on);
      return;
    }
    case 'recover':
      await api.call('recoverWebhookEndpoint', id, { since: new Date(ctx.start).toISOString() }, on);
      return;
    case 'disable':
    case 'enable':
      await api.call('updateWebhookEndpoint', id, { enabled: a.kind === 'enable' }, on);
      return;
    case 'pause':
      await api.call('updateWebhookEndpoint', id, { enabled: false }, on);
      await perform(ctx, { atMs: a.atMs, kind: 'call', jobs: 0, emergency: false }, n);
      await steps.clock.sleep(a.forMs, 'pause');
      await api.call('updateWebhookEndpoint', id, { enabled: true }, on);
      return;
    case 'delete':
      await api.call('deleteWebhookEndpoint', id, undefined, on);
      return;
    case 'rotate':
      await api.call('rotateWebhookEndpointSecret', id, {}, on);
      return;
    case 'rate':
      await api.call('updateWebhookEndpoint', id, { rate_limit: a.rateLimit }, on);
      return;
  }
}

/** The workload's actions and pauses, in the order of their times. */
const timeline = (workload: Workload) =>
  [...workload.actions, ...(workload.pauses ?? [])].sort((x, y) => x.atMs - y.atMs);

/** A planned endpoint, created through the API as an app creates one, with its stored record. */
async function createEndpoint(
  at: { api: SimApi; world: World; shopId: string; start: number },
  i: number,
  plan: EndpointPlan,
): Promise<Made['endpoints'][number]> {
  const name = `ep${i}`;
  const url = at.world.receivers.add(name, plan.behaviour, at.start + plan.turnAfterMs);
  const created = await at.api.call(
    'createWebhookEndpoint',
    {},
    {
      url,
      events: ['call.completed', 'job.created', 'job.approved'],
      ...(plan.ordered ? { ordering: 'per_resource' } : {}),
      ...(plan.rateLimit ? { rate_limit: plan.rateLimit } : {}),
      ...(plan.filtered ? { filter: { $or: [{ type: 'call.completed' }, { 'data.urgency': 'emergency' }] } } : {}),
    },
    { gated: false, endpoint: name },
  );
  if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
  const record = await at.world.deps.endpoints.get(at.shopId, String(created.body.id));
  if (!record) throw new Error('the endpoint just created is missing');
  return { id: record.id, name, record };
}
/**
 * One run: a fresh table, the workload's endpoints, its actions at their times under the
 * run's faults, then a drain (faults off, every receiver back) until nothing is open, then
 * the checks.
 */
export async function runOnce(
  workload: Workload,
  scheduler: Scheduler,
  opts: { table: SimTable; seed: number; verbose?: boolean },
): Promise<RunReport> {
  const START = startOf(opts.seed);
  const clock = new SimClock(START);
  const undoDate = installSimDate(clock);
  const timers = trackShortTimers();
  const rng = new Rng(workload.seed);
  const undoRandom = seedRandomness(new Rng(workload.seed ^ 0x5eed), new Rng(workload.seed ^ 0x7a11));
  const drawn = drawFaults(rng);
  let faults: FaultRates = drawn;
  const steps = new Steps(scheduler, clock, rng, timers.pending, START);
  steps.verbose = opts.verbose ?? false;
  let world: World | undefined;
  let clean = false;
  // In Lambda an unhandled rejection ends the invocation with an error: here it is a violation.
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  try {
    const table = await opts.table.ready();
    world = await buildWorld(steps, {
      endpoint: opts.table.endpoint,
      tableName: table.name,
      reader: table.reader,
      faults: () => faults,
      concurrency: workload.concurrency,
    });
    const shop = await createShop(world.deps, { name: 'Sim Plumbing', owner_email: 'owner@sim.test' });
    const api = new SimApi(steps, world, shop.id);
    const made: Made = {
      shopId: shop.id,
      endpoints: [],
      jobs: [],
      events: [],
      eventAnswered: new Map(),
      approved: new Map(),
    };
    for (const [i, plan] of workload.endpoints.entries())
      made.endpoints.push(await createEndpoint({ api, world, shopId: shop.id, start: START }, i, plan));
    world.gate();
    const w = world;
    let sweepEvery = () => rng.int(...SWEEP_EVERY_MS);
    const sweep = () => {
      const killAt = rng.chance(faults.kill) ? rng.int(1, 12) : null;
      void steps.invoke('sweep', () => w.sweep({}), { killAt }).catch(() => undefined);
      clock.at(clock.now() + sweepEvery(), 'sweeper', sweep);
    };
    clock.at(START + sweepEvery(), 'sweeper', sweep);
    const failures: string[] = [];
    const ctx = { steps, world: w, api, made, start: START };
    for (const [n, a] of timeline(workload).entries())
      clock.at(START + a.atMs, a.kind, () => {
        perform(ctx, a, n).catch((e: unknown) => failures.push(`${a.kind}: ${String(e)}`));
      });
    let ran = await steps.runUntil(START + ACTIVE_MS);
    // The drain: AWS behaves, every receiver is back; the sweeper runs less often (its work is
    // the same, the run is shorter), and the run ends when nothing is open.
    faults = CALM;
    world.receivers.healed = true;
    sweepEvery = () => DRAIN_STEP_MS;
    steps.log('drain: faults off, receivers back');
    while (clock.now() < START + DRAIN_LIMIT_MS) {
      ran += await steps.runUntil(clock.now() + DRAIN_STEP_MS);
      if ((await finalState(world, made)).open === 0 && world.queue.pending() === 0) break;
    }
    const state = await finalState(world, made);
    const violations = [
      ...checkRun({ world, made, api, state, faults: drawn, failures }),
      ...rejections.map((r) => ({ rule: 'unhandled-rejection', detail: String(r) })),
    ];
    clean = state.open === 0 && violations.length === 0;
    return {
      steps: ran,
      faults: drawn,
      deliveries: state.rows.length,
      receipts: world.receivers.receipts.length,
      duplicates: state.duplicates,
      kills: steps.trace.filter((l) => l.includes('KILLED')).length,
      violations,
      trace: steps.trace,
    };
  } finally {
    process.off('unhandledRejection', onRejection);
    world?.close();
    timers.undo();
    undoRandom();
    undoDate();
    if (!clean) await opts.table.renew();
  }
}
