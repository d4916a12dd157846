/**
 * One crash scenario on a child-process local stack (test/helpers/child-stack.ts): a new
 * shop with its endpoints on loopback receivers, N call.completed events ingested straight
 * into the child's table, the stack killed (SIGKILL of the app) or stopped (Ctrl-C) at a
 * chosen moment, started again on the same data, and then every accepted (event, endpoint)
 * pair checked at the receivers. Shared by test/e2e/delivery-durability.test.ts and bench/crash.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RETRY_SCHEDULE_MS } from '../../shared/delivery/policy';
import type { ChildStack } from '../../test/helpers/child-stack';
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

export async function runCrashScenario(stack: ChildStack, opts: CrashScenarioOptions): Promise<CrashScenarioResult> {
  const log = opts.log ?? (() => undefined);
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
  const accepted: string[] = [];
  let kill: Promise<number | null> | undefined;
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
  // The ordered endpoint's events are pairs for it alone.
  const eventsOf = (r: FaultReceiver): string[] =>
    ordered && r === ordered.receiver ? ordered.accepted.flatMap((j) => [j.created, j.approved]) : accepted;
  const allReceivers = (): FaultReceiver[] => [...receivers, ...(ordered ? [ordered.receiver] : [])];
  // How many ordered deliveries are held, looked at every 250 ms until the kill: the last look is what the kill found.
  let heldSampled = 0;
  const sampling = (async () => {
    // Also ends when the stack is closed without a kill (a scenario that failed before it).
    while (ordered && !kill && stack.running) {
      heldSampled = await ordered.heldNow().catch(() => heldSampled);
      await sleep(250);
    }
  })();

  let failedIngests = 0;
  let killedAt = '';
  let killIssuedAt = 0;
  const startKill = (why: string) => {
    if (kill) return;
    killedAt = why;
    killIssuedAt = performance.now();
    kill = opts.kind.startsWith('sigint') ? stack.sigint() : stack.sigkill().then(() => null);
  };

  // Ingest: a few in parallel; mid-ingest kills at a third and keeps ingesting until the store is gone.
  const killAfter = Math.max(1, Math.floor(opts.events / 3));
  let next = 0;
  let stop = false;
  const worker = async () => {
    while (!stop && next < opts.events) {
      next++;
      try {
        const result = await stack.ingest(tenant.shop);
        accepted.push(...result.event_ids);
        await ordered?.writeJob();
        if (opts.kind === 'sigkill-mid-ingest' && accepted.length >= killAfter)
          startKill(`after ${accepted.length} of ${opts.events} ingests returned`);
      } catch {
        failedIngests++;
        stop = true;
      }
    }
  };
  // During first attempts: ingest fast (ahead of the pipeline), then kill at once, while pairs still wait for their
  // first request.
  const concurrency = opts.ingestConcurrency ?? (opts.kind === 'sigkill-first-attempts' ? 16 : 4);
  await Promise.all(Array.from({ length: concurrency }, worker));
  log(`${opts.kind}: ${accepted.length} ingested, ${failedIngests} failed`);

  if (opts.kind === 'sigkill-first-attempts') {
    const requested = () => receivers.reduce((n, r) => n + new Set(r.receipts.map((x) => x.eventId)).size, 0);
    const deadline = Date.now() + 60_000;
    while (requested() === 0 && Date.now() < deadline) await sleep(5);
    if (requested() === 0) throw new Error('no first attempt reached a receiver within 60 s');
    startKill(
      `after all ${accepted.length} ingests, with ${requested()} of ` +
        `${accepted.length * receivers.length} pairs requested`,
    );
  }

  if (opts.kind.endsWith('retries-pending')) {
    // First attempts made for every pair (so the retries pending are many; at most 20 s), then a `retrying` row seen
    // through the API.
    const deadline = Date.now() + 20_000;
    const attempted = () =>
      receivers.every((r) => {
        const seen = new Set(r.receipts.map((x) => x.eventId));
        return accepted.every((id) => seen.has(id));
      });
    while (!attempted() && Date.now() < deadline) await sleep(50);
    // Should every failed pair have been delivered by then (first attempts that came late), one more event makes a
    // failure to retry.
    const oneMore = async () => accepted.push(...(await stack.ingest(tenant.shop)).event_ids);
    const why = await retryingSeen(stack, tenant.key, allReceivers(), oneMore);
    // An ordered run is killed with a delivery held behind a retrying one, which is what it tests.
    if (ordered) await heldSeen(ordered, () => heldSampled);
    startKill(why);
  }
  if (!kill) startKill('after the ingests');
  const exitCode = (await kill) ?? null;
  await sampling;
  const heldBeforeKill = heldSampled;
  const deliveredBeforeKill = allReceivers().reduce(
    (n, r) => n + eventsOf(r).filter((id) => r.firstOk.has(id)).length,
    0,
  );
  log(`${opts.kind}: killed ${killedAt}; ${deliveredBeforeKill} pairs delivered before`);

  const killedWall = Date.now();
  await stack.restart();
  const restartedAt = performance.now();
  const restartedWall = Date.now();
  const downMs = restartedAt - killIssuedAt;
  log(`${opts.kind}: up again after ${(downMs / 1000).toFixed(1)} s`);

  const missing = () => allReceivers().reduce((n, r) => n + eventsOf(r).filter((id) => !r.firstOk.has(id)).length, 0);
  const lastReceipt = () => Math.max(restartedAt, ...allReceivers().flatMap((r) => r.receipts.map((x) => x.at)));
  const settle = opts.settleTimeoutMs ?? 120_000;
  const idle = opts.idleGiveUpMs ?? 35_000;
  // A missing pair whose row has an attempt due before the settle deadline is waited for, however
  // long the receivers were quiet: after an open circuit held two attempts and the receiver failed
  // two, the next is 2 h out, 72 s at TIME_SCALE 0.01. Not one long overdue (its wake-up is what the
  // bench looks for being lost), nor one due too close to the deadline to go out before it.
  const dueBefore = restartedWall + settle - 5_000;
  const dueInWindow = async () => {
    const waitedOn = new Set([...endpointIds.values()]);
    const missingEvents = new Set(allReceivers().flatMap((r) => eventsOf(r).filter((e) => !r.firstOk.has(e))));
    for (const id of missingEvents) {
      const rows = (await stack.tableDeps().deliveries.listForEvent(tenant.shop.id, id)).filter((d) =>
        waitedOn.has(d.endpoint_id),
      );
      const due = (d: (typeof rows)[number]) => Date.parse(d.next_attempt_at ?? '');
      if (
        rows.some(
          (d) =>
            (d.status === 'pending' || d.status === 'retrying') && due(d) > Date.now() - idle && due(d) <= dueBefore,
        )
      )
        return true;
    }
    return false;
  };
  let checkedAt = -Infinity;
  let waitingOnSchedule = false;
  for (;;) {
    const now = performance.now();
    if (now - restartedAt > settle) break;
    if (missing() === 0 && now - lastReceipt() >= (opts.quietMs ?? 2000)) break;
    if (missing() > 0 && now - restartedAt >= idle && now - lastReceipt() >= idle) {
      if (now - checkedAt >= 1000) {
        checkedAt = now;
        waitingOnSchedule = await dueInWindow();
      }
      if (!waitingOnSchedule) break;
    }
    await sleep(50);
  }

  if (process.env.BENCH_CRASH_DEBUG) {
    for (const r of allReceivers()) {
      for (const x of r.receipts) {
        const first = r.firstOk.get(x.eventId);
        if (first === undefined || x.at <= first) continue;
        const rows = (await stack.tableDeps().deliveries.listForEvent(tenant.shop.id, x.eventId)).filter(
          (d) => d.endpoint_id === endpointIds.get(r.name),
        );
        const attempts = (d: (typeof rows)[number]) =>
          d.history.map((h) => `${h.status}@${(Date.parse(h.at) - killedWall).toFixed(0)}`).join('/');
        console.error(
          `DUP ${r.name} ${x.eventId} first ${(first - killIssuedAt).toFixed(0)}ms-vs-kill ` +
            `dup ${(x.at - restartedAt).toFixed(0)}ms-after-restart ` +
            `rows ${rows.map((d) => `${d.id}:${d.origin}:${d.status}:${d.attempts}:${attempts(d)}`).join(' ')}`,
        );
      }
    }
  }
  if (process.env.BENCH_CRASH_LOG_DIR)
    writeFileSync(join(process.env.BENCH_CRASH_LOG_DIR, `${opts.kind}.log`), stack.output());
  const acceptedSet = new Set(accepted);
  const lost: LostPair[] = [];
  let lastDelivery = -Infinity;
  for (const r of allReceivers()) {
    for (const id of eventsOf(r)) {
      const at = r.firstOk.get(id);
      if (at === undefined) lost.push({ eventId: id, endpoint: r.name, row: '' });
      else lastDelivery = Math.max(lastDelivery, at);
    }
  }
  for (const l of lost) l.row = await describeRow(stack, tenant.shop.id, l.eventId, endpointIds.get(l.endpoint) ?? '');
  // The ordered and rate-limited endpoints' rows are left out: a held delivery, or one waiting for the rate, goes out
  // later by design.
  const paced = new Set(opts.endpoints.filter((e) => e.rateLimit).map((e) => endpointIds.get(e.name)));
  const lateness = await attemptLateness(
    stack,
    tenant.shop.id,
    accepted,
    new Set([...endpointIds.values()].filter((id) => !paced.has(id))),
    { killedWall, restartedWall, timeScale: opts.timeScale },
  );
  return {
    kind: opts.kind,
    acceptedEvents: accepted.length,
    failedIngests,
    acceptedPairs: allReceivers().reduce((n, r) => n + eventsOf(r).length, 0),
    deliveredPairs: allReceivers().reduce((n, r) => n + eventsOf(r).length, 0) - lost.length,
    deliveredBeforeKill,
    lost,
    duplicates: allReceivers().reduce((n, r) => n + r.duplicates(), 0),
    rejected: allReceivers().reduce((n, r) => n + r.rejected, 0),
    unaccepted: allReceivers().reduce(
      (n, r) => n + r.receipts.filter((x) => !acceptedSet.has(x.eventId) && !eventsOf(r).includes(x.eventId)).length,
      0,
    ),
    killedAt,
    exitCode,
    downMs,
    restartedAt,
    lateness,
    restartToLastDeliveryMs: lastDelivery > restartedAt ? lastDelivery - restartedAt : null,
    receivers: allReceivers(),
    ...(ordered
      ? { ordered: { jobs: ordered.accepted.length, heldBeforeKill, outOfOrder: ordered.outOfOrder() } }
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
