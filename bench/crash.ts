/**
 * Crash: does a SIGKILL or a Ctrl-C of the local stack lose accepted deliveries? The real
 * `npm start` entry runs as a child process with a data directory and TIME_SCALE 0.01 (the
 * first retries fall 600 ms and 3 s out). For each scenario a new shop gets four endpoints
 * on loopback receivers that verify every signature (two answer 500 to the first two
 * requests of each event, never three times in a row; two answer 204), N call.completed
 * events are ingested straight into the child's table, the stack is killed at the chosen
 * moment, started again on the same data, and every accepted (event, endpoint) pair is
 * looked for at its receiver. A fifth endpoint has `rate_limit: 20`: none of its deliveries may be lost
 * and no more than 20 may start in any second, across the kill. A sixth has `ordering: "per_resource"` and gets, with
 * each call, one job's job.created and job.approved; its receiver answers 500 to the first
 * request of each event (never three in a row), so job.approved deliveries are held when the
 * stack goes down: none may be lost, and no job.approved may arrive before its job.created
 * was answered 2xx.
 *
 *   npm run bench:crash   (BENCH_CRASH_EVENTS=100: 400 pairs per scenario; BENCH_CRASH_SETTLE_MS=120000;
 *                          BENCH_CRASH_SCENARIOS=sigkill-mid-ingest,sigkill-first-attempts,
 *                            sigkill-retries-pending,sigint-retries-pending (a comma-separated list, no spaces);
 *                          BENCH_CRASH_DEBUG=1 prints each duplicate: when it came beside the kill and the restart,
 *                            and its row's attempts)
 *
 * Target (docs/api.md, Durability): 0 lost; overdue deliveries are sent within a minute
 * (scaled: 600 ms) of the next start. Duplicates are allowed (at least once) and counted.
 */
import './lib/quiet';
import { closeChildStacks, startChildStack } from '../test/helpers/child-stack';
import {
  CRASH_KINDS,
  describeKind,
  runCrashScenario,
  type CrashKind,
  type CrashScenarioResult,
} from './lib/crash-scenario';
import { answers, closeFaultReceivers } from './lib/fault-receiver';
import { mostInOneSecond, percentile, printTable, setting, summarize, verdict } from './lib/stats';

const EVENTS = setting('BENCH_CRASH_EVENTS', 100);
const SETTLE_MS = setting('BENCH_CRASH_SETTLE_MS', 120_000);
const TIME_SCALE = 0.01;
/** The fifth call.completed endpoint's `rate_limit`: its backlog is still draining when the stack goes down. */
const RATE = 20;
/** BENCH_CRASH_SCENARIOS=sigkill-first-attempts,… runs only those. */
const KINDS = (process.env.BENCH_CRASH_SCENARIOS ?? CRASH_KINDS.join(',')).split(',').map((k) => {
  if (!(CRASH_KINDS as readonly string[]).includes(k))
    throw new Error(`BENCH_CRASH_SCENARIOS: unknown scenario '${k}' (one of ${CRASH_KINDS.join(', ')})`);
  return k as CrashKind;
});

const endpoints = () => [
  { name: 'flaky-1', policy: answers.flaky(2, 2) },
  { name: 'flaky-2', policy: answers.flaky(2, 2) },
  { name: 'healthy-1', policy: answers.ok() },
  { name: 'healthy-2', policy: answers.ok() },
  { name: 'limited', policy: answers.ok(), rateLimit: RATE },
];

const started = performance.now();
const results: CrashScenarioResult[] = [];
const failures: string[] = [];
try {
  // A fresh stack and data dir per scenario: what one scenario leaves undelivered must not weigh on the next.
  for (const kind of KINDS) {
    try {
      const stack = await startChildStack({ timeScale: TIME_SCALE, deliveryTimeoutMs: 2000 });
      const result = await runCrashScenario(stack, {
        kind,
        events: EVENTS,
        endpoints: endpoints(),
        settleTimeoutMs: SETTLE_MS,
        idleGiveUpMs: 35_000,
        timeScale: TIME_SCALE,
        ordered: { name: 'ordered', policy: answers.flaky(1, 2) },
        log: (line) => console.error(`  ${line}`),
      });
      results.push(result);
    } catch (err) {
      failures.push(`${describeKind[kind]}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await closeFaultReceivers();
      await closeChildStacks();
    }
  }
} finally {
  await closeFaultReceivers();
  await closeChildStacks();
}

const s = (ms: number | null) => (ms === null ? '-' : (ms / 1000).toFixed(1));
printTable(
  `Crash and restart: ${EVENTS} events × 5 endpoints (one with rate_limit ${RATE}), and ${EVENTS} jobs × 2 events to an ordered endpoint, per scenario (child process, TIME_SCALE ${TIME_SCALE}, data dir kept across the restart, a fresh stack per scenario)`,
  [
    'scenario',
    'accepted pairs',
    'delivered before kill',
    'delivered',
    'lost',
    'duplicates',
    'down s',
    'up → last delivery s',
    'target',
    'result',
  ],
  results.map((r) => [
    describeKind[r.kind],
    r.acceptedPairs,
    r.deliveredBeforeKill,
    r.deliveredPairs,
    r.lost.length,
    r.duplicates,
    s(r.downMs),
    s(r.restartToLastDeliveryMs),
    '0 lost',
    verdict(r.lost.length === 0 && r.rejected === 0),
  ]),
);
printTable(
  'The ordered endpoint (ordering per_resource): held deliveries at the kill, and the order per job after the restart',
  [
    'scenario',
    'jobs',
    'held just before the kill',
    'its events lost',
    'job.approved before job.created succeeded',
    'target',
    'result',
  ],
  results.map((r) => {
    const lost = r.lost.filter((l) => l.endpoint === 'ordered').length;
    const o = r.ordered ?? { jobs: 0, heldBeforeKill: 0, outOfOrder: [] };
    return [
      describeKind[r.kind],
      o.jobs,
      o.heldBeforeKill,
      lost,
      o.outOfOrder.length,
      '0 lost, 0 out of order',
      verdict(lost === 0 && o.outOfOrder.length === 0),
    ];
  }),
);
printTable(
  `The rate-limited endpoint (rate_limit: ${RATE}): its deliveries across the kill and the restart`,
  ['scenario', 'its events lost', 'most started in any 1 s (at the receiver)', 'target', 'result'],
  results.map((r) => {
    const lost = r.lost.filter((l) => l.endpoint === 'limited').length;
    const receiver = r.receivers.find((x) => x.name === 'limited');
    const most = mostInOneSecond((receiver?.receipts ?? []).map((x) => x.at));
    return [
      describeKind[r.kind],
      lost,
      most,
      `0 lost, ≤ ${RATE}`,
      verdict(lost === 0 && most <= RATE && receiver !== undefined),
    ];
  }),
);
const p90 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    90,
  );
const sec = (x: number) => (Number.isFinite(x) ? (x / 1000).toFixed(1) : '-');
const scaledMinute = 60_000 * TIME_SCALE;
printTable(
  `Attempts after the restart: how late each went out, s (from the rows' attempt history; a scaled minute is ${scaledMinute} ms)`,
  [
    'scenario',
    'overdue at restart',
    'sent: p50',
    'p90',
    'max',
    'within a scaled minute',
    'due later',
    'late: p50',
    'p90',
    'max',
  ],
  results.map((r) => {
    const o = summarize(r.lateness.overdue);
    const l = summarize(r.lateness.later);
    const within = r.lateness.overdue.filter((x) => x <= scaledMinute).length;
    return [
      describeKind[r.kind],
      r.lateness.overdue.length,
      sec(o.p50),
      sec(p90(r.lateness.overdue)),
      sec(o.max),
      `${within} of ${r.lateness.overdue.length}`,
      r.lateness.later.length,
      sec(l.p50),
      sec(p90(r.lateness.later)),
      sec(l.max),
    ];
  }),
);
console.log('');
for (const r of results) {
  const byEndpoint = new Map<string, number>();
  for (const l of r.lost) byEndpoint.set(l.endpoint, (byEndpoint.get(l.endpoint) ?? 0) + 1);
  const lost = [...byEndpoint].map(([e, n]) => `${e} ${n}`).join(', ');
  const requests = r.receivers.map((x) => `${x.name} ${x.requests}`).join(', ');
  for (const l of r.lost.slice(0, 5)) console.log(`  - not arrived: ${l.endpoint} ${l.eventId}: ${l.row}`);
  const afterUp = r.receivers
    .flatMap((x) => x.receipts.map((y) => y.at))
    .filter((at) => at >= r.restartedAt)
    .map((at) => Math.floor((at - r.restartedAt) / 2000));
  const buckets = new Map<number, number>();
  for (const b of afterUp) buckets.set(b, (buckets.get(b) ?? 0) + 1);
  console.log(
    `  requests after the restart, per 2 s: ${[...buckets]
      .sort((a, b) => a[0] - b[0])
      .map(([b, n]) => `${b * 2}s:${n}`)
      .join(' ')}`,
  );
  console.log(
    `- ${describeKind[r.kind]}: killed ${r.killedAt}; ${r.acceptedEvents} events accepted, ${r.failedIngests} ingests failed at the kill${r.exitCode === null ? '' : `; exit code ${r.exitCode}`}; requests per receiver: ${requests}${lost ? `; lost per endpoint: ${lost}` : ''}${r.unaccepted ? `; ${r.unaccepted} requests for events whose ingest threw` : ''}${r.rejected ? `; ${r.rejected} FAILED signature verification` : ''}`,
  );
}
console.log(
  `\n"lost": accepted pairs never answered 2xx by their receiver, waiting after the restart until all arrived (then 2 s more for duplicates), or 35 s without any request (longer than the longest deferral of a delivery over its endpoint's in-flight limit) unless a missing pair has an attempt due within the limit (not one overdue by more than that), at most ${SETTLE_MS / 1000} s. ` +
    `"down s": kill (or Ctrl-C) → API listening again (mostly the JVM start). "up → last delivery s": API listening → the last accepted pair delivered. Total ${((performance.now() - started) / 1000).toFixed(0)} s.`,
);
for (const f of failures) console.log(`- FAILED: ${f}`);
if (failures.length > 0) process.exitCode = 1;
