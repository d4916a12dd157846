/**
 * What a delivery costs at list prices (bench/lib/prices.ts), from what the benchmarks
 * counted: table requests and the capacity units they consumed, SQS requests and their
 * 64 KB chunks, and each handler's invocations and wall time at its configured memory.
 */
import { DYNAMODB_WRITES } from '../../lib/local/stack';
import type { HandlerTally, OpTally } from './instrument';
import type { LogTally } from './log-bytes';
import { platformBytesPerInvocation } from './platform-logs';
import { FUNCTION_TRACING } from './lambda-memory';
export { ALL_IN_LINE } from './all-in-line';
import {
  CLOUDWATCH_LOGS_PER_GB_INGESTED,
  DYNAMODB_PER_MILLION_READ_UNITS,
  DYNAMODB_PER_MILLION_WRITE_UNITS,
  EVENTBRIDGE_API_DESTINATIONS_PER_MILLION,
  EVENTBRIDGE_CUSTOM_EVENTS_PER_MILLION,
  EVENTBRIDGE_SCHEDULER_PER_MILLION,
  KMS_PER_MILLION_REQUESTS,
  LAMBDA_ARM64_PER_GB_SECOND,
  LAMBDA_PER_MILLION_REQUESTS,
  PRICE_REGION,
  PRICES_AS_OF,
  SQS_STANDARD_PER_MILLION_REQUESTS,
  XRAY_PER_MILLION_TRACES,
} from './prices';
import { printTable } from './stats';

/**
 * The local queue poller asks how many messages are visible before each receive
 * (lib/local/queue-poller.ts); Lambda's SQS event source does not, so these are shown
 * but not billed.
 */
export const LOCAL_ONLY_SQS = new Set(['GetQueueAttributes']);

/** One stage's counts over a run: its table and queue requests, and its Lambda handler if it has one. */
export interface StageUsage {
  name: string;
  table?: ReadonlyMap<string, OpTally>;
  sqs?: ReadonlyMap<string, OpTally>;
  lambda?: { tally: HandlerTally; memoryMb: number; systemLogLevel: 'INFO' | 'WARN' };
  /** The lines its handler wrote (logs and EMF metrics), as CloudWatch Logs would ingest them. */
  logs?: LogTally;
  /** Shown but left out of the total (default: counted in it). */
  outsideTotal?: boolean;
}

/** Per delivery, and in dollars per million deliveries. */
export interface StageCost {
  name: string;
  tableRequests: number;
  writeUnits: number;
  readUnits: number;
  sqsRequests: number;
  /** SQS requests as billed: 64 KB chunks, local-only operations left out. */
  sqsBilled: number;
  invocations: number;
  lambdaMs: number;
  gbSeconds: number;
  /** CloudWatch Logs bytes: the handler's lines and Lambda's own (at the function's system log level). */
  logBytes: number;
  perMillion: { table: number; sqs: number; lambda: number; logs: number; total: number };
}

const sum = <T>(xs: Iterable<T>, f: (x: T) => number): number => [...xs].reduce((n, x) => n + f(x), 0);

export function stageCost(usage: StageUsage, deliveries: number): StageCost {
  const table = [...(usage.table ?? new Map<string, OpTally>())];
  const sqs = [...(usage.sqs ?? new Map<string, OpTally>())];
  const per = (n: number) => n / deliveries;
  const writeUnits = per(sum(table, ([op, t]) => (DYNAMODB_WRITES.has(op) ? t.units : 0)));
  const readUnits = per(sum(table, ([op, t]) => (DYNAMODB_WRITES.has(op) ? 0 : t.units)));
  const sqsBilled = per(sum(sqs, ([op, t]) => (LOCAL_ONLY_SQS.has(op) ? 0 : t.units)));
  const lambda = usage.lambda;
  const invocations = per(lambda?.tally.invocations ?? 0);
  const gbSeconds = lambda ? per((lambda.tally.billedMs / 1000) * (lambda.memoryMb / 1024)) : 0;
  const logBytes = per(
    (usage.logs?.bytes ?? 0) +
      (lambda ? lambda.tally.invocations * platformBytesPerInvocation(lambda.systemLogLevel) : 0),
  );
  const perMillion = {
    table: writeUnits * DYNAMODB_PER_MILLION_WRITE_UNITS + readUnits * DYNAMODB_PER_MILLION_READ_UNITS,
    sqs: sqsBilled * SQS_STANDARD_PER_MILLION_REQUESTS,
    lambda: invocations * LAMBDA_PER_MILLION_REQUESTS + gbSeconds * 1e6 * LAMBDA_ARM64_PER_GB_SECOND,
    logs: (logBytes * 1e6 * CLOUDWATCH_LOGS_PER_GB_INGESTED) / 2 ** 30,
    total: 0,
  };
  perMillion.total = perMillion.table + perMillion.sqs + perMillion.lambda + perMillion.logs;
  return {
    name: usage.name,
    tableRequests: per(sum(table, ([, t]) => t.requests)),
    writeUnits,
    readUnits,
    sqsRequests: per(sum(sqs, ([, t]) => t.requests)),
    sqsBilled,
    invocations,
    lambdaMs: per(lambda?.tally.ms ?? 0),
    gbSeconds,
    logBytes,
    perMillion,
  };
}

/** Several stages as one (the figures add up per delivery). */
export function totalCost(name: string, costs: StageCost[]): StageCost {
  const add = (f: (c: StageCost) => number) => sum(costs, f);
  return {
    name,
    tableRequests: add((c) => c.tableRequests),
    writeUnits: add((c) => c.writeUnits),
    readUnits: add((c) => c.readUnits),
    sqsRequests: add((c) => c.sqsRequests),
    sqsBilled: add((c) => c.sqsBilled),
    invocations: add((c) => c.invocations),
    lambdaMs: add((c) => c.lambdaMs),
    gbSeconds: add((c) => c.gbSeconds),
    logBytes: add((c) => c.logBytes),
    perMillion: {
      table: add((c) => c.perMillion.table),
      sqs: add((c) => c.perMillion.sqs),
      lambda: add((c) => c.perMillion.lambda),
      logs: add((c) => c.perMillion.logs),
      total: add((c) => c.perMillion.total),
    },
  };
}

/** The managed alternatives, per million deliveries: what a user compares the total with. */
export const REFERENCES: { name: string; perMillion: number }[] = [
  {
    name: 'EventBridge API destinations: the HTTP invocations alone',
    perMillion: EVENTBRIDGE_API_DESTINATIONS_PER_MILLION,
  },
  {
    name: 'EventBridge: a custom event put on a bus + its API destination invocation',
    perMillion: EVENTBRIDGE_CUSTOM_EVENTS_PER_MILLION + EVENTBRIDGE_API_DESTINATIONS_PER_MILLION,
  },
  {
    name: 'EventBridge Scheduler: one scheduled invocation per delivery',
    perMillion: EVENTBRIDGE_SCHEDULER_PER_MILLION,
  },
];

/** "BatchGetItem 0.10, UpdateItem 1.00": requests per delivery by operation, busiest first. */
export function opsPerDelivery(
  ops: ReadonlyMap<string, OpTally> | undefined,
  deliveries: number,
  units?: string,
): string {
  const rows = [...(ops ?? new Map<string, OpTally>())]
    .filter(([, t]) => t.requests > 0)
    .sort((a, b) => b[1].requests - a[1].requests);
  return (
    rows
      .map(
        ([op, t]) =>
          `${op} ${(t.requests / deliveries).toFixed(2)}${units ? ` (${(t.units / deliveries).toFixed(2)} ${units})` : ''}`,
      )
      .join(', ') || 'none'
  );
}

const usd = (x: number) => `$${x.toFixed(x >= 10 ? 2 : 3)}`;

/** Prints the per-delivery counts and cost of each stage, their total, and the managed services' prices beside it. */
export function printCost(title: string, usages: StageUsage[], deliveries: number): StageCost {
  const costs = usages.map((u) => stageCost(u, deliveries));
  const total = totalCost(
    'total per delivery',
    costs.filter((_, i) => !usages[i]?.outsideTotal),
  );
  const row = (c: StageCost) => [
    c.name,
    c.tableRequests.toFixed(2),
    `${c.writeUnits.toFixed(2)} / ${c.readUnits.toFixed(2)}`,
    c.sqsBilled.toFixed(2),
    c.invocations.toFixed(2),
    c.lambdaMs.toFixed(1),
    c.logBytes.toFixed(0),
    usd(c.perMillion.table),
    usd(c.perMillion.sqs),
    usd(c.perMillion.lambda),
    usd(c.perMillion.logs),
    usd(c.perMillion.total),
  ];
  printTable(
    `${title} (${deliveries} deliveries; list prices ${PRICE_REGION}, ${PRICES_AS_OF}, arm64 Lambda, DynamoDB on-demand)`,
    [
      'per delivery',
      'table requests',
      'write / read units',
      'SQS requests billed',
      'Lambda invocations',
      'Lambda ms',
      'log bytes',
      '$/M table',
      '$/M SQS',
      '$/M Lambda',
      '$/M logs',
      '$/M deliveries',
    ],
    [
      ...costs.map(row),
      ...(costs.length > 1 ? [row(total)] : []),
      ...REFERENCES.map((r) => [r.name, '', '', '', '', '', '', '', '', '', '', usd(r.perMillion)]),
    ],
  );
  for (const u of usages) {
    const local = [...(u.sqs ?? new Map<string, OpTally>())].filter(([op]) => LOCAL_ONLY_SQS.has(op)).map(([op]) => op);
    console.log(
      `- ${u.name}: table ${opsPerDelivery(u.table, deliveries, 'units')}; SQS ${opsPerDelivery(u.sqs, deliveries)}${local.length ? ` (${local.join(', ')}: local poller only, not billed)` : ''}${u.lambda ? `; Lambda at ${u.lambda.memoryMb} MB: ${stageCost(u, deliveries).gbSeconds.toFixed(5)} GB-s` : ''}${logsLine(u, deliveries)}`,
    );
  }
  const estimated = sum(usages, (u) => sum([...(u.table ?? new Map<string, OpTally>()).values()], (t) => t.estimated));
  if (estimated > 0)
    console.log(
      `(${estimated} table requests reported no consumed capacity, e.g. failed conditions: their units are estimated, 1 per item, 2 in a transaction)`,
    );
  return total;
}

/** "; logs 0.10 lines (52 B) + Lambda's own lines at WARN (none)": what a stage's log bytes are made of. */
function logsLine(u: StageUsage, deliveries: number): string {
  if (!u.lambda) return '';
  const lines = (u.logs?.lines ?? 0) / deliveries;
  const bytes = (u.logs?.bytes ?? 0) / deliveries;
  const own = platformBytesPerInvocation(u.lambda.systemLogLevel);
  return `; logs ${lines.toFixed(2)} lines (${bytes.toFixed(0)} B) of its own + Lambda's START/END/REPORT at ${u.lambda.systemLogLevel} (${own ? `${own} B an invocation` : 'none'})`;
}

/** What the stages do not count themselves, counted over the same deliveries. */
export interface AllInCounts {
  traces: number;
  kmsRequests: number;
  schedules: number;
}

/** The all-in figure per million deliveries (./printAllIn), and the parts the stages do not count. */
export function allInParts(
  total: StageCost,
  counted: AllInCounts,
  deliveries: number,
): { xray: number; kms: number; scheduler: number; all: number } {
  const per = (n: number) => n / deliveries;
  const xray = per(counted.traces) * XRAY_PER_MILLION_TRACES;
  const kms = per(counted.kmsRequests) * KMS_PER_MILLION_REQUESTS;
  const scheduler = per(counted.schedules) * EVENTBRIDGE_SCHEDULER_PER_MILLION;
  return { xray, kms, scheduler, all: total.perMillion.total + xray + kms + scheduler };
}

/**
 * The contract's all-in figure for one regime (or one part of it): the stages' table, SQS,
 * Lambda and logs, plus what they do not measure here, priced from the stack's settings:
 * X-Ray traces (the delivery path traces pass-through by default: a stream or queue record
 * carries no sampled trace, so no trace is recorded), KMS (a shop's data key is decrypted
 * once per container and cached, shared/secrets/kms-data-keys.ts; the local stack uses a key
 * file) and Scheduler (a delivery the receiver takes at once has no retry to schedule).
 * Prints one line `All-in, <regime>: $X.XXX per million deliveries`, which `npm run bench`
 * adds up into its closing line, and returns the figure.
 */
export function printAllIn(regime: string, total: StageCost, counted: AllInCounts, deliveries: number): number {
  const per = (n: number) => n / deliveries;
  const { xray, kms, scheduler, all } = allInParts(total, counted, deliveries);
  const tracing = [...new Set(Object.values(FUNCTION_TRACING))].join('/');
  console.log(
    `${regime}, per million deliveries: table ${usd(total.perMillion.table)}, SQS ${usd(total.perMillion.sqs)}, Lambda ${usd(total.perMillion.lambda)}, ` +
      `logs ${usd(total.perMillion.logs)}, X-Ray ${usd(xray)} (${per(counted.traces).toFixed(2)} traces a delivery: ${tracing} tracing), ` +
      `KMS ${usd(kms)} (${per(counted.kmsRequests).toFixed(4)} requests a delivery: data keys cached per container), Scheduler ${usd(scheduler)} (${per(counted.schedules).toFixed(2)} schedules a delivery)`,
  );
  console.log(`All-in, ${regime}: ${usd(all)} per million deliveries`);
  return all;
}

/**
 * Traces a function records over `seconds` of `invocations`: none when it traces pass-through
 * (what calls it, a stream or a queue, carries no sampled trace); when active, X-Ray's default
 * rule: the first request each second and 5 % of the rest.
 */
export function tracesFor(mode: 'PassThrough' | 'Active', invocations: number, seconds: number): number {
  if (mode === 'PassThrough') return 0;
  const reservoir = Math.min(invocations, Math.ceil(seconds));
  return reservoir + 0.05 * (invocations - reservoir);
}
