/**
 * The pairs of a crash scenario (./crash-scenario.ts): the scene they belong to, the wait for
 * them after the restart, and what arrived.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RETRY_SCHEDULE_MS } from '../../shared/delivery/policy';
import type { Shop } from '../../shared/domain/shop';
import type { ChildStack } from '../../test/helpers/child-stack';
import type { CrashScenarioOptions, CrashScenarioResult, LostPair } from './crash-scenario';
import type { FaultReceiver } from './fault-receiver';
import type { OrderedJobs } from './ordered-jobs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The shop, its endpoints on their receivers, and the events accepted for them so far. */
export interface Scene {
  stack: ChildStack;
  opts: CrashScenarioOptions;
  log: (line: string) => void;
  shop: Shop;
  key: string;
  /** The plain endpoints' receivers (every call.completed event is a pair for each). */
  receivers: FaultReceiver[];
  endpointIds: Map<string, string>;
  ordered: OrderedJobs | undefined;
  /** call.completed events whose ingest returned. */
  accepted: string[];
}

/** What the kill found. */
export interface Kill {
  killedAt: string;
  issuedAt: number;
  exitCode: number | null;
  failedIngests: number;
  heldBeforeKill: number;
  deliveredBeforeKill: number;
}

/** When the stack came back: performance.now() and the wall clock, and the kill's wall clock. */
export interface Restart {
  at: number;
  wall: number;
  killedWall: number;
  downMs: number;
}

export const allReceivers = (scene: Scene): FaultReceiver[] => [
  ...scene.receivers,
  ...(scene.ordered ? [scene.ordered.receiver] : []),
];

/** The events that are pairs for this receiver: the ordered endpoint's are its own. */
export const eventsOf = (scene: Scene, r: FaultReceiver): string[] =>
  scene.ordered && r === scene.ordered.receiver
    ? scene.ordered.accepted.flatMap((j) => [j.created, j.approved])
    : scene.accepted;

export const countPairs = (scene: Scene, pick: (r: FaultReceiver, eventId: string) => boolean): number =>
  allReceivers(scene).reduce((n, r) => n + eventsOf(scene, r).filter((id) => pick(r, id)).length, 0);

/**
 * Waits for every pair: until all arrived and the receivers were quiet for `quietMs`, the
 * settle timeout, or `idleGiveUpMs` without a request, unless a missing pair has an attempt
 * due in the window.
 */
export async function settle(scene: Scene, restart: Restart): Promise<void> {
  const { opts } = scene;
  const missing = () => countPairs(scene, (r, id) => !r.firstOk.has(id));
  const lastReceipt = () => Math.max(restart.at, ...allReceivers(scene).flatMap((r) => r.receipts.map((x) => x.at)));
  const timeout = opts.settleTimeoutMs ?? 120_000;
  const idle = opts.idleGiveUpMs ?? 35_000;
  let checkedAt = -Infinity;
  let waitingOnSchedule = false;
  for (;;) {
    const now = performance.now();
    if (now - restart.at > timeout) return;
    if (missing() === 0 && now - lastReceipt() >= (opts.quietMs ?? 2000)) return;
    if (missing() > 0 && now - restart.at >= idle && now - lastReceipt() >= idle) {
      if (now - checkedAt >= 1000) {
        checkedAt = now;
        waitingOnSchedule = await attemptDueInWindow(scene, restart.wall + timeout - 5_000, idle);
      }
      if (!waitingOnSchedule) return;
    }
    await sleep(50);
  }
}

/**
 * Whether a missing pair's row has an attempt due before `dueBefore`, however long the
 * receivers were quiet: after an open circuit held two attempts and the receiver failed two,
 * the next is 2 h out, 72 s at TIME_SCALE 0.01. Not one long overdue (its wake-up is what the
 * bench looks for being lost), nor one due too close to the deadline to go out before it.
 */
async function attemptDueInWindow(scene: Scene, dueBefore: number, idle: number): Promise<boolean> {
  const waitedOn = new Set(scene.endpointIds.values());
  const receivers = allReceivers(scene);
  const missingEvents = new Set(receivers.flatMap((r) => eventsOf(scene, r).filter((e) => !r.firstOk.has(e))));
  for (const id of missingEvents) {
    const rows = await scene.stack.tableDeps().deliveries.listForEvent(scene.shop.id, id);
    const due = (d: (typeof rows)[number]) => Date.parse(d.next_attempt_at ?? '');
    const waiting = rows.some(
      (d) =>
        waitedOn.has(d.endpoint_id) &&
        (d.status === 'pending' || d.status === 'retrying') &&
        due(d) > Date.now() - idle &&
        due(d) <= dueBefore,
    );
    if (waiting) return true;
  }
  return false;
}

/** What a run leaves for a person to look at: duplicates on stderr (BENCH_CRASH_DEBUG), the stack's output. */
export async function keepEvidence(scene: Scene, kill: Kill, restart: Restart): Promise<void> {
  if (process.env.BENCH_CRASH_DEBUG) {
    for (const r of allReceivers(scene)) {
      for (const x of r.receipts) {
        const first = r.firstOk.get(x.eventId);
        if (first === undefined || x.at <= first) continue;
        const rows = (await scene.stack.tableDeps().deliveries.listForEvent(scene.shop.id, x.eventId)).filter(
          (d) => d.endpoint_id === scene.endpointIds.get(r.name),
        );
        const attempts = (d: (typeof rows)[number]) =>
          d.history.map((h) => `${h.status}@${(Date.parse(h.at) - restart.killedWall).toFixed(0)}`).join('/');
        console.error(
          `DUP ${r.name} ${x.eventId} first ${(first - kill.issuedAt).toFixed(0)}ms-vs-kill ` +
            `dup ${(x.at - restart.at).toFixed(0)}ms-after-restart ` +
            `rows ${rows.map((d) => `${d.id}:${d.origin}:${d.status}:${d.attempts}:${attempts(d)}`).join(' ')}`,
        );
      }
    }
  }
  if (process.env.BENCH_CRASH_LOG_DIR)
    writeFileSync(join(process.env.BENCH_CRASH_LOG_DIR, `${scene.opts.kind}.log`), scene.stack.output());
}

/** Every accepted pair checked at its receiver; the lost ones with what the table says of them. */
export async function tally(scene: Scene, kill: Kill, restart: Restart): Promise<CrashScenarioResult> {
  const { stack, opts } = scene;
  const receivers = allReceivers(scene);
  const lost: LostPair[] = [];
  let lastDelivery = -Infinity;
  for (const r of receivers) {
    for (const id of eventsOf(scene, r)) {
      const at = r.firstOk.get(id);
      if (at === undefined) lost.push({ eventId: id, endpoint: r.name, row: '' });
      else lastDelivery = Math.max(lastDelivery, at);
    }
  }
  for (const l of lost)
    l.row = await describeRow(stack, scene.shop.id, l.eventId, scene.endpointIds.get(l.endpoint) ?? '');
  // The ordered and rate-limited endpoints' rows are left out: a held delivery, or one waiting for the rate, goes out
  // later by design.
  const paced = new Set(opts.endpoints.filter((e) => e.rateLimit).map((e) => scene.endpointIds.get(e.name)));
  const lateness = await attemptLateness(
    stack,
    scene.shop.id,
    scene.accepted,
    new Set([...scene.endpointIds.values()].filter((id) => !paced.has(id))),
    { killedWall: restart.killedWall, restartedWall: restart.wall, timeScale: opts.timeScale },
  );
  const acceptedSet = new Set(scene.accepted);
  const acceptedPairs = countPairs(scene, () => true);
  const sum = (of: (r: FaultReceiver) => number) => receivers.reduce((n, r) => n + of(r), 0);
  return {
    kind: opts.kind,
    acceptedEvents: scene.accepted.length,
    failedIngests: kill.failedIngests,
    acceptedPairs,
    deliveredPairs: acceptedPairs - lost.length,
    deliveredBeforeKill: kill.deliveredBeforeKill,
    lost,
    duplicates: sum((r) => r.duplicates()),
    rejected: sum((r) => r.rejected),
    unaccepted: sum(
      (r) => r.receipts.filter((x) => !acceptedSet.has(x.eventId) && !eventsOf(scene, r).includes(x.eventId)).length,
    ),
    killedAt: kill.killedAt,
    exitCode: kill.exitCode,
    downMs: restart.downMs,
    restartedAt: restart.at,
    lateness,
    restartToLastDeliveryMs: lastDelivery > restart.at ? lastDelivery - restart.at : null,
    receivers,
    ...(scene.ordered
      ? {
          ordered: {
            jobs: scene.ordered.accepted.length,
            heldBeforeKill: kill.heldBeforeKill,
            outOfOrder: scene.ordered.outOfOrder(),
          },
        }
      : {}),
  };
}

/**
 * For every attempt made after the kill (the stack was down in between, so after the restart):
 * when it went out against when it could have, max(stack listening again, its due time). Due
 * times come from the row: its creation for attempt 1, else the previous attempt plus the
 * scaled retry delay (the fault receivers send no Retry-After).
 */
async function attemptLateness(
  stack: ChildStack,
  shopId: string,
  events: string[],
  endpoints: Set<string>,
  t: { killedWall: number; restartedWall: number; timeScale: number },
): Promise<{ overdue: number[]; later: number[] }> {
  const out = { overdue: [] as number[], later: [] as number[] };
  for (const eventId of events) {
    for (const d of await stack.tableDeps().deliveries.listForEvent(shopId, eventId)) {
      if (!endpoints.has(d.endpoint_id)) continue;
      d.history.forEach((a, i) => {
        const at = Date.parse(a.at);
        if (at <= t.killedWall) return;
        const previous = d.history[i - 1];
        const due = previous
          ? Date.parse(previous.at) + (RETRY_SCHEDULE_MS[previous.attempt - 1] ?? 0) * t.timeScale
          : Date.parse(d.created_at);
        (due <= t.restartedWall ? out.overdue : out.later).push(Math.max(0, at - Math.max(due, t.restartedWall)));
      });
    }
  }
  return out;
}

/**
 * The delivery row of a pair that did not arrive, as the table has it: lost (no row, or ended) or late (still open).
 */
async function describeRow(stack: ChildStack, shopId: string, eventId: string, endpointId: string): Promise<string> {
  const rows = (await stack.tableDeps().deliveries.listForEvent(shopId, eventId)).filter(
    (d) => d.endpoint_id === endpointId,
  );
  if (rows.length === 0) return 'no row';
  return rows
    .map(
      (d) =>
        `${d.status} after ${d.attempts} attempts (${d.history.map((h) => h.status ?? h.error).join(', ')}), ` +
        `next ${d.next_attempt_at ?? '-'}, sweep ${d.sweep_at ?? '-'}`,
    )
    .join('; ');
}
