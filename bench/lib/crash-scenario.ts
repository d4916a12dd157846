/**
 * One crash scenario on a child-process local stack (test/helpers/child-stack.ts): a new
 * shop with its endpoints on loopback receivers, N call.completed events ingested straight
 * into the child's table, the stack killed (SIGKILL of the app) or stopped (Ctrl-C) at a
 * chosen moment, started again on the same data, and then every accepted (event, endpoint)
 * pair checked at the receivers. Shared by test/e2e/delivery-durability.test.ts and bench/crash.ts.
 */
import type { ChildStack } from '../../test/helpers/child-stack';
import {
  allReceivers,
  countPairs,
  keepEvidence,
  settle,
  tally,
  type Kill,
  type Restart,
  type Scene,
} from './crash-pairs';
import { startFaultReceiver, type AnswerPolicy, type FaultReceiver } from './fault-receiver';
import { startOrderedJobs } from './ordered-jobs';

export type CrashKind =
  'sigkill-mid-ingest' | 'sigkill-first-attempts' | 'sigkill-retries-pending' | 'sigint-retries-pending';

export const CRASH_KINDS: readonly CrashKind[] = [
  'sigkill-mid-ingest',
  'sigkill-first-attempts',
  'sigkill-retries-pending',
  'sigint-retries-pending',
];

export const describeKind: Record<CrashKind, string> = {
  'sigkill-mid-ingest': 'SIGKILL mid-ingest',
  'sigkill-first-attempts': 'SIGKILL during first attempts',
  'sigkill-retries-pending': 'SIGKILL with retries pending',
  'sigint-retries-pending': 'Ctrl-C with retries pending',
};

export interface CrashScenarioOptions {
  kind: CrashKind;
  /** Calls to ingest (one call.completed event each). */
  events: number;
  /**
   * Every endpoint subscribes to call.completed; each gets its own receiver (and, with `rateLimit`, that
   * `rate_limit`).
   */
  endpoints: { name: string; policy: AnswerPolicy; rateLimit?: number }[];
  /** Parallel ingests (default 4; 16 for sigkill-first-attempts, to get ahead of the pipeline). */
  ingestConcurrency?: number;
  /** Give up waiting this long after the restart (default 120 s). */
  settleTimeoutMs?: number;
  /** Once everything arrived, keep listening this long for duplicates (default 2 s). */
  quietMs?: number;
  /**
   * Stop waiting early when nothing arrived for this long, and at least this long after the restart (default 35 s:
   * longer than the longest wait of a delivery deferred over its endpoint's in-flight limit, 30 s, so a slow drain
   * is not taken for a loss), unless a missing pair's row has an attempt due before the settle timeout.
   */
  idleGiveUpMs?: number;
  /** The child stack's TIME_SCALE (for when each attempt fell due). */
  timeScale: number;
  /**
   * An endpoint with `ordering: "per_resource"` besides: with each ingest one job's job.created
   * and job.approved are written too (./ordered-jobs.ts); its events count in the pairs.
   */
  ordered?: { name: string; policy: AnswerPolicy };
  log?: (line: string) => void;
}

export interface LostPair {
  eventId: string;
  endpoint: string;
  /** What the table says of it when the wait ended: "no row", or status, attempts and times. */
  row: string;
}

export interface CrashScenarioResult {
  kind: CrashKind;
  /** Ingests that returned (their events are accepted). */
  acceptedEvents: number;
  /** Ingests that threw (the stack was going down). */
  failedIngests: number;
  acceptedPairs: number;
  /** Accepted pairs answered 2xx (verified) by their receiver, before or after the restart. */
  deliveredPairs: number;
  /** …of which before the kill. */
  deliveredBeforeKill: number;
  lost: LostPair[];
  /** Requests after the pair's first 2xx (at-least-once duplicates). */
  duplicates: number;
  /** Requests whose signature did not verify. */
  rejected: number;
  /** Verified requests for events this scenario did not count as accepted (an ingest that committed but threw). */
  unaccepted: number;
  /** What the kill found: e.g. "after 10 of 30 ingests". */
  killedAt: string;
  /** Ctrl-C only: the exit code. */
  exitCode: number | null;
  /** Kill (or Ctrl-C) issued → the stack listening again, ms. */
  downMs: number;
  /**
   * Attempts made after the restart, from the rows' attempt history: how long after the
   * stack listened again (or after falling due, if later) each went out, in ms. `overdue`:
   * those already due when the stack came back (what the sweeper at start must find).
   */
  lateness: { overdue: number[]; later: number[] };
  /** performance.now() when the stack listened again. */
  restartedAt: number;
  /** Stack listening again → last pair delivered, ms (null when nothing was delivered after it). */
  restartToLastDeliveryMs: number | null;
  receivers: FaultReceiver[];
  /**
   * The ordered endpoint's jobs: how many of its deliveries were held just before the kill, and jobs whose
   * job.approved arrived before job.created succeeded.
   */
  ordered?: { jobs: number; heldBeforeKill: number; outOfOrder: string[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The scenario in stages: the shop and its endpoints, the ingests and the kill, the restart,
 * the wait for every pair, and what arrived.
 */
export async function runCrashScenario(stack: ChildStack, opts: CrashScenarioOptions): Promise<CrashScenarioResult> {
  const scene = await setUp(stack, opts);
  const kill = await ingestAndKill(scene);
  const restart = await restartAfter(scene, kill);
  await settle(scene, restart);
  await keepEvidence(scene, kill, restart);
  return tally(scene, kill, restart);
}

async function setUp(stack: ChildStack, opts: CrashScenarioOptions): Promise<Scene> {
  const tenant = await stack.newTenant(`Crash ${opts.kind}`);
  const receivers: FaultReceiver[] = [];
  const endpointIds = new Map<string, string>();
  for (const e of opts.endpoints) {
    const receiver = await startFaultReceiver(e.name, e.policy);
    receivers.push(receiver);
    const created = await stack.api('POST', '/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, events: ['call.completed'], ...(e.rateLimit ? { rate_limit: e.rateLimit } : {}) },
    });
    if (created.status !== 201)
      throw new Error(`could not create endpoint ${e.name}: ${created.status} ${created.text}`);
    receiver.setSecret(created.json.secret as string);
    endpointIds.set(e.name, created.json.id as string);
  }
  const tableDeps = stack.tableDeps();
  const ordered = opts.ordered
    ? await startOrderedJobs(
        {
          shopId: tenant.shop.id,
          createEndpoint: (body) => stack.api('POST', '/v1/webhook-endpoints', { key: tenant.key, body }),
          putEvent: (e) => tableDeps.events.put(e),
          rowsOf: (eventId) => tableDeps.deliveries.listForEvent(tenant.shop.id, eventId),
        },
        opts.ordered.name,
        opts.ordered.policy,
      )
    : undefined;
  if (ordered) endpointIds.set(ordered.receiver.name, ordered.endpointId);
  return {
    stack,
    opts,
    log: opts.log ?? (() => undefined),
    shop: tenant.shop,
    key: tenant.key,
    receivers,
    endpointIds,
    ordered,
    accepted: [],
  };
}

/**
 * Ingests a few at a time and kills the stack at the scenario's moment: a third of the way
 * through the ingests (they go on until the store is gone), once the first attempts reach a
 * receiver, or once a delivery is seen retrying (and, with an ordered endpoint, one held).
 */
async function ingestAndKill(scene: Scene): Promise<Kill> {
  const { stack, opts, ordered } = scene;
  let kill: Promise<number | null> | undefined;
  let killedAt = '';
  let issuedAt = 0;
  const startKill = (why: string) => {
    if (kill) return;
    killedAt = why;
    issuedAt = performance.now();
    kill = opts.kind.startsWith('sigint') ? stack.sigint() : stack.sigkill().then(() => null);
  };
  // How many ordered deliveries are held, looked at every 250 ms until the kill: the last look is what the kill found.
  let heldSampled = 0;
  const sampling = (async () => {
    // Also ends when the stack is closed without a kill (a scenario that failed before it).
    while (ordered && !kill && stack.running) {
      heldSampled = await ordered.heldNow().catch(() => heldSampled);
      await sleep(250);
    }
  })();

  const failedIngests = await ingest(scene, startKill);
  scene.log(`${opts.kind}: ${scene.accepted.length} ingested, ${failedIngests} failed`);
  if (opts.kind === 'sigkill-first-attempts') startKill(await firstAttemptsSeen(scene));
  if (opts.kind.endsWith('retries-pending')) {
    const why = await retriesPending(scene);
    // An ordered run is killed with a delivery held behind a retrying one, which is what it tests.
    if (ordered) await heldSeen(ordered, () => heldSampled);
    startKill(why);
  }
  startKill('after the ingests');
  const exitCode = (await kill) ?? null;
  await sampling;
  const deliveredBeforeKill = countPairs(scene, (r, id) => r.firstOk.has(id));
  scene.log(`${opts.kind}: killed ${killedAt}; ${deliveredBeforeKill} pairs delivered before`);
  return { killedAt, issuedAt, exitCode, failedIngests, heldBeforeKill: heldSampled, deliveredBeforeKill };
}

/**
 * The ingests, a few in parallel (16 for a kill during first attempts, to get ahead of the
 * pipeline); a mid-ingest kill starts at a third. Returns how many threw (the stack was going down).
 */
async function ingest(scene: Scene, startKill: (why: string) => void): Promise<number> {
  const { stack, opts } = scene;
  const killAfter = Math.max(1, Math.floor(opts.events / 3));
  let next = 0;
  let failed = 0;
  let stop = false;
  const worker = async () => {
    while (!stop && next < opts.events) {
      next++;
      try {
        const result = await stack.ingest(scene.shop);
        scene.accepted.push(...result.event_ids);
        await scene.ordered?.writeJob();
        if (opts.kind === 'sigkill-mid-ingest' && scene.accepted.length >= killAfter)
          startKill(`after ${scene.accepted.length} of ${opts.events} ingests returned`);
      } catch {
        failed++;
        stop = true;
      }
    }
  };
  const concurrency = opts.ingestConcurrency ?? (opts.kind === 'sigkill-first-attempts' ? 16 : 4);
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}
/** Waits (at most 60 s) for a first attempt to reach a receiver; the kill's moment. */
async function firstAttemptsSeen(scene: Scene): Promise<string> {
  const requested = () => scene.receivers.reduce((n, r) => n + new Set(r.receipts.map((x) => x.eventId)).size, 0);
  const deadline = Date.now() + 60_000;
  while (requested() === 0 && Date.now() < deadline) await sleep(5);
  if (requested() === 0) throw new Error('no first attempt reached a receiver within 60 s');
  const pairs = scene.accepted.length * scene.receivers.length;
  return `after all ${scene.accepted.length} ingests, with ${requested()} of ${pairs} pairs requested`;
}

/**
 * Waits for first attempts at every pair (so the retries pending are many; at most 20 s), then
 * for a `retrying` row seen through the API; the kill's moment.
 */
async function retriesPending(scene: Scene): Promise<string> {
  const deadline = Date.now() + 20_000;
  const attempted = () =>
    scene.receivers.every((r) => {
      const seen = new Set(r.receipts.map((x) => x.eventId));
      return scene.accepted.every((id) => seen.has(id));
    });
  while (!attempted() && Date.now() < deadline) await sleep(50);
  // Should every failed pair have been delivered by then (first attempts that came late), one more event makes a
  // failure to retry.
  const oneMore = async () => scene.accepted.push(...(await scene.stack.ingest(scene.shop)).event_ids);
  return retryingSeen(scene.stack, scene.key, allReceivers(scene), oneMore);
}

async function restartAfter(scene: Scene, kill: Kill): Promise<Restart> {
  const killedWall = Date.now();
  await scene.stack.restart();
  const at = performance.now();
  const downMs = at - kill.issuedAt;
  scene.log(`${scene.opts.kind}: up again after ${(downMs / 1000).toFixed(1)} s`);
  return { at, wall: Date.now(), killedWall, downMs };
}

/**
 * Waits (at most 20 s) until the sampler has seen an ordered delivery held. Should every job have
 * finished by then (first attempts came late on a busy machine), one more job makes a hold: its
 * job.created fails twice, and its job.approved waits seconds behind it.
 */
async function heldSeen(ordered: { writeJob(): Promise<void> }, held: () => number): Promise<void> {
  const started = Date.now();
  let wrote = false;
  while (held() === 0 && Date.now() - started < 20_000) {
    if (!wrote && Date.now() - started > 2_000) {
      wrote = true;
      await ordered.writeJob();
    }
    await sleep(50);
  }
}
/**
 * Waits until the API shows a delivery in status `retrying`, looking at events a receiver
 * answered with an error and has not yet accepted: up to 4 of them at a time, every 100 ms
 * (well under the per-key rate limit). When there is none (every failed pair already
 * delivered), it ingests one more event, whose first attempt a flaky receiver fails, at
 * most 10 times. Returns a description of the moment; the error says what the API showed.
 */
async function retryingSeen(
  stack: ChildStack,
  key: string,
  receivers: FaultReceiver[],
  oneMore: () => Promise<unknown>,
): Promise<string> {
  const deadline = Date.now() + 20_000;
  let turn = 0;
  let extra = 0;
  let emptySince: number | null = null;
  const seen = new Map<string, number>();
  while (Date.now() < deadline) {
    const candidates = [
      ...new Set(
        receivers.flatMap((r) =>
          r.receipts.filter((x) => x.answer !== 'hang' && !r.firstOk.has(x.eventId)).map((x) => x.eventId),
        ),
      ),
    ];
    if (candidates.length === 0) {
      emptySince ??= Date.now();
      if (Date.now() - emptySince >= 1000 && extra < 10) {
        extra++;
        emptySince = null;
        await oneMore();
      }
    } else {
      emptySince = null;
      const ids = Array.from(
        { length: Math.min(4, candidates.length) },
        () => candidates[turn++ % candidates.length] as string,
      );
      const answers = await Promise.all([...new Set(ids)].map((id) => stack.api('GET', `/v1/events/${id}`, { key })));
      for (const event of answers) {
        const statuses =
          event.status === 200
            ? ((event.json.deliveries ?? []) as { status: string }[]).map((d) => d.status)
            : [`HTTP ${event.status}`];
        statuses.forEach((s) => seen.set(s, (seen.get(s) ?? 0) + 1));
        if (statuses.includes('retrying')) {
          const waiting = receivers.reduce(
            (n, r) => n + new Set(r.receipts.filter((x) => !r.firstOk.has(x.eventId)).map((x) => x.eventId)).size,
            0,
          );
          const after = extra > 0 ? `, after ${extra} more events` : '';
          return `with retries pending (${waiting} pairs failed and not yet delivered${after})`;
        }
      }
    }
    await sleep(100);
  }
  const shown = [...seen].map(([s, n]) => `${s} ×${n}`).join(', ') || 'nothing';
  throw new Error(
    `no delivery was seen retrying within 20 s (the API showed: ${shown}; ${extra} more events ingested): ` +
      'does an endpoint answer errors?',
  );
}
