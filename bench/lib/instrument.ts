import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareStack } from '@smithy/types';
import { DYNAMODB_WRITES } from '../../lib/local/stack';

/**
 * An SDK client (SQS, DynamoDB) or the table's document client, which shares its DynamoDB client's middleware
 * stack.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any service's inputs and outputs
type AnyClient = { middlewareStack: MiddlewareStack<any, any> };

/** Requests of one operation in one stage, and what they bill: capacity units (DynamoDB) or 64 KB chunks (SQS). */
export interface OpTally {
  requests: number;
  items: number;
  units: number;
  /** Requests whose units the service did not report (a failed request, or no ConsumedCapacity): estimated instead. */
  estimated: number;
}

export interface CallCounter {
  /** Requests by operation name, e.g. { PutItem: 16, Query: 1 }. */
  calls: Map<string, number>;
  /** Items written, by operation (a BatchWriteItem or TransactWriteItems counts each item). */
  items: Map<string, number>;
  /** The same requests by stage (the `stage` context they were sent in, '' outside any), then operation. */
  stages: Map<string, Map<string, OpTally>>;
  reset(): void;
}

/**
 * The pipeline stage a request belongs to: the benchmarks run each handler (and the
 * ingest call) inside `stage.run(name, …)`, so a counter on a client the stages share
 * can still split its requests per stage.
 */
export const stage = new AsyncLocalStorage<string>();

const itemsWritten = (command: string, input: Record<string, unknown>): number => {
  if (command === 'BatchWriteItemCommand')
    return Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>).reduce((n, r) => n + r.length, 0);
  if (command === 'TransactWriteItemsCommand') return ((input.TransactItems ?? []) as unknown[]).length;
  if (command === 'SendMessageBatchCommand') return ((input.Entries ?? []) as unknown[]).length;
  return 1;
};

/** The DynamoDB operations that accept ReturnConsumedCapacity. */
const CAPACITY_OPS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);

/**
 * BENCH_CAPACITY_DETAIL=1: requests ask for INDEXES instead of TOTAL (the same units, split
 * between the table and each index), and the process prints, as it exits, the units per
 * request of each stage's operations by table and index: where a write's units go.
 */
const DETAIL = process.env.BENCH_CAPACITY_DETAIL === '1';
const detail = new Map<string, { requests: number; parts: Map<string, number> }>();

function noteDetail(stageName: string, op: string, output: unknown): void {
  type Part = { CapacityUnits?: number };
  type Consumed = {
    TableName?: string;
    CapacityUnits?: number;
    Table?: Part;
    GlobalSecondaryIndexes?: Record<string, Part>;
  };
  const cc = (output as { ConsumedCapacity?: Consumed | Consumed[] } | undefined)?.ConsumedCapacity;
  if (cc === undefined) return;
  const row = detail.get(`${stageName || '(none)'} ${op}`) ?? { requests: 0, parts: new Map<string, number>() };
  detail.set(`${stageName || '(none)'} ${op}`, row);
  row.requests++;
  const add = (part: string, units = 0) => row.parts.set(part, (row.parts.get(part) ?? 0) + units);
  for (const c of Array.isArray(cc) ? cc : [cc]) {
    add('total', c.CapacityUnits);
    add('table', c.Table?.CapacityUnits);
    for (const [index, part] of Object.entries(c.GlobalSecondaryIndexes ?? {})) add(index, part.CapacityUnits);
  }
}

if (DETAIL) {
  process.on('exit', () => {
    const rows = [...detail].sort(([a], [b]) => a.localeCompare(b));
    console.error(`\nCapacity units per request, by table and index (pid ${process.pid}):`);
    for (const [name, { requests, parts }] of rows) {
      const split = [...parts].map(([part, units]) => `${part} ${(units / requests).toFixed(2)}`).join(', ');
      console.error(`  ${name}: ${requests} requests; ${split}`);
    }
  });
}

/** Capacity units a DynamoDB response reports (TOTAL: the table and its indexes), or undefined when it carries none. */
function reportedUnits(output: unknown): number | undefined {
  const cc = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] } | undefined)
    ?.ConsumedCapacity;
  if (cc === undefined) return undefined;
  return (Array.isArray(cc) ? cc : [cc]).reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
}

/**
 * What a request costs when the response does not say: one unit per item written (two in
 * a transaction), one per item read (strongly consistent, items under 4 KB). DynamoDB
 * bills failed conditional writes and cancelled transactions too, and their errors carry
 * no ConsumedCapacity.
 */
function estimatedUnits(op: string, items: number, input: Record<string, unknown>): number {
  if (op === 'TransactWriteItems' || op === 'TransactGetItems') return 2 * items;
  if (op === 'BatchGetItem')
    return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).reduce(
      (n, r) => n + (r.Keys?.length ?? 0),
      0,
    );
  return items;
}

const SQS_CHUNK = 64 * 1024;
const bodyBytes = (messages: { MessageBody?: string; Body?: string }[] | undefined): number =>
  (messages ?? []).reduce((n, m) => n + Buffer.byteLength(m.MessageBody ?? m.Body ?? ''), 0);

/** SQS bills each 64 KB chunk of a request's payload as one request. */
function sqsChunks(op: string, input: Record<string, unknown>, output: unknown): number {
  let bytes = 0;
  if (op === 'SendMessage') bytes = Buffer.byteLength(String(input.MessageBody ?? ''));
  if (op === 'SendMessageBatch') bytes = bodyBytes(input.Entries as { MessageBody?: string }[]);
  if (op === 'ReceiveMessage') bytes = bodyBytes((output as { Messages?: { Body?: string }[] } | undefined)?.Messages);
  return Math.max(1, Math.ceil(bytes / SQS_CHUNK));
}

let counters = 0;

type StageOf = (op: string, input: Record<string, unknown>) => string | undefined;

/** A request as the counter files it, with the tally of its stage and operation that its units go to. */
interface Filed {
  name: string;
  input: Record<string, unknown>;
  dynamo: boolean;
  items: number;
  stageName: string;
  tally: OpTally;
}

/**
 * Counts every request a client sends (an SDK client's commands as they enter its stack), with
 * the units each bills: on the table it asks every request for its consumed capacity
 * (ReturnConsumedCapacity TOTAL, which changes nothing else), on an SQS client it counts
 * 64 KB payload chunks. Each request is filed under the `stage` it was sent in, else
 * under what `stageOf` says (e.g. an event source's receives, sent outside any handler).
 * Several clients (an event source's SQS API and the functions' own) may share one counter.
 */
export function countCalls(clients: AnyClient | AnyClient[], opts: { stageOf?: StageOf } = {}): CallCounter {
  const counter: CallCounter = {
    calls: new Map(),
    items: new Map(),
    stages: new Map(),
    reset: () => {
      counter.calls.clear();
      counter.items.clear();
      counter.stages.clear();
    },
  };
  for (const client of Array.isArray(clients) ? clients : [clients]) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        const dynamo = context.clientName === 'DynamoDBClient';
        const filed = fileRequest(counter, context.commandName ?? 'unknown', input, dynamo, opts.stageOf);
        if (dynamo) askForCapacity(filed);
        try {
          const out = await next(args);
          billAnswer(filed, out.output);
          return out;
        } catch (err) {
          billFailure(filed);
          throw err;
        }
      },
      // A name of its own: a client may carry several counters (one per measured window).
      { step: 'initialize', name: `benchCallCounter${++counters}` },
    );
  }
  return counter;
}

/** Counts a request by operation and, under the stage it was sent in, by stage and operation. */
function fileRequest(
  counter: CallCounter,
  command: string,
  input: Record<string, unknown>,
  dynamo: boolean,
  stageOf: StageOf | undefined,
): Filed {
  const name = command.replace(/Command$/, '');
  const items = itemsWritten(command, input);
  counter.calls.set(name, (counter.calls.get(name) ?? 0) + 1);
  counter.items.set(name, (counter.items.get(name) ?? 0) + items);
  const stageName = stage.getStore() ?? stageOf?.(name, input) ?? '';
  const tally = tallyOf(counter, stageName, name);
  tally.requests++;
  tally.items += items;
  return { name, input, dynamo, items, stageName, tally };
}

/** The tally of one operation in one stage, made empty the first time. */
function tallyOf(counter: CallCounter, stageName: string, name: string): OpTally {
  const byOp = counter.stages.get(stageName) ?? new Map<string, OpTally>();
  counter.stages.set(stageName, byOp);
  const tally = byOp.get(name) ?? { requests: 0, items: 0, units: 0, estimated: 0 };
  byOp.set(name, tally);
  return tally;
}

/** Asks a DynamoDB request for its consumed capacity, unless its caller already does. */
function askForCapacity({ name, input }: Filed): void {
  if (CAPACITY_OPS.has(name) && input.ReturnConsumedCapacity === undefined)
    input.ReturnConsumedCapacity = DETAIL ? 'INDEXES' : 'TOTAL';
}

/** Adds the units an answer reports (DynamoDB's capacity, SQS's chunks), or an estimate when it reports none. */
function billAnswer({ name, input, dynamo, items, stageName, tally }: Filed, output: unknown): void {
  if (DETAIL && dynamo) noteDetail(stageName, name, output);
  const reported = dynamo ? reportedUnits(output) : sqsChunks(name, input, output);
  if (reported === undefined) tally.estimated++;
  tally.units += reported ?? estimatedUnits(name, items, input);
}

/** A failed request bills too, and its error says nothing of units: an estimate (SQS: one request). */
function billFailure({ name, input, dynamo, items, tally }: Filed): void {
  tally.estimated++;
  tally.units += dynamo ? estimatedUnits(name, items, input) : 1;
}

/** Every stage's requests as one map by operation (a process that runs one stage only). */
export function allStages(counter: CallCounter): Map<string, OpTally> {
  return addTallies(new Map(), ...counter.stages.values());
}

/** Adds tallies by operation into `into` (counts of several runs or processes). */
export function addTallies(into: Map<string, OpTally>, ...from: ReadonlyMap<string, OpTally>[]): Map<string, OpTally> {
  for (const map of from) {
    for (const [op, t] of map) {
      const sum = into.get(op) ?? { requests: 0, items: 0, units: 0, estimated: 0 };
      into.set(op, {
        requests: sum.requests + t.requests,
        items: sum.items + t.items,
        units: sum.units + t.units,
        estimated: sum.estimated + t.estimated,
      });
    }
  }
  return into;
}

/** Lambda's view of one handler: invocations, records, and wall time summed over invocations (what duration bills). */
export interface HandlerTally {
  invocations: number;
  records: number;
  ms: number;
  /** The same, each invocation rounded up to the millisecond, as Lambda bills it. */
  billedMs: number;
}

export const newHandlerTally = (): HandlerTally => ({ invocations: 0, records: 0, ms: 0, billedMs: 0 });

/** Wraps a batch handler: runs it in `name`'s stage and adds its wall time to `tally`. */
export function timedHandler<E extends { Records: unknown[] }, R>(
  name: string,
  handler: (event: E) => Promise<R>,
  tally: HandlerTally,
): (event: E) => Promise<R> {
  return async (event) => {
    const t = performance.now();
    try {
      return await stage.run(name, () => handler(event));
    } finally {
      tally.invocations++;
      tally.records += event.Records.length;
      const ms = performance.now() - t;
      tally.ms += ms;
      tally.billedMs += Math.ceil(ms);
    }
  };
}

export { DYNAMODB_WRITES };
