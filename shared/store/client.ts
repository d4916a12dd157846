import type { AttributeValue, CancellationReason, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocument, QueryCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';

/** The table: the SDK's document client over the process's one DynamoDB client (shared/wiring/clients.ts). */
export interface Dynamo {
  doc: DynamoDBDocument;
  /** The client under `doc`: its `destroy()` closes the kept-alive connections (the document client's does nothing). */
  client: DynamoDBClient;
  tableName: string;
}

/**
 * One request as it settled: its operation (`GetItem`), what the store asked (document values), and
 * the answer or the error.
 */
export type TableObserver = (
  operation: string,
  input: object,
  outcome: { output: unknown } | { error: unknown },
) => void;

let observers = 0;

/**
 * Calls `observer` after every request of the table's client settles (the local stack wakes its
 * stream poller on writes the fan-out takes; tests count requests); returns the undo. A
 * middleware at the initialize step, where the document client's input is not yet marshalled.
 */
export function observeTable(db: Pick<Dynamo, 'doc'>, observer: TableObserver): () => void {
  const name = `tableObserver${++observers}`;
  db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? '').replace(/Command$/, '');
      try {
        const out = await next(args);
        observer(operation, args.input as object, { output: out.output });
        return out;
      } catch (error) {
        observer(operation, args.input as object, { error });
        throw error;
      }
    },
    { step: 'initialize', name },
  );
  return () => void db.doc.middlewareStack.remove(name);
}

/**
 * A write refused by its condition; `Item` (marshalled) is the item as it was, when the request
 * asked for it (ReturnValuesOnConditionCheckFailure).
 */
export function isConditionFailed(err: unknown): err is Error & { Item?: Record<string, AttributeValue> } {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/**
 * A transaction's reasons, one per item (`Item` marshalled, as in isConditionFailed), when `err` is
 * its cancellation; otherwise undefined.
 */
export function cancellationReasons(err: unknown): CancellationReason[] | undefined {
  if (!(err instanceof Error) || err.name !== 'TransactionCanceledException') return undefined;
  return (err as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
}

/** Drops the item's key attributes, leaving the record the domain knows. */
export function stripKeys<T>(item: Record<string, unknown>): T {
  const {
    pk: _pk,
    sk: _sk,
    gsi1pk: _g1,
    gsi1sk: _g2,
    gsi2pk: _g3,
    gsi2sk: _g4,
    entity: _entity,
    expires_at: _exp,
    ...record
  } = item;
  return record as T;
}

/** One item by key, strongly consistent, without its key attributes; null when absent. */
export async function getRecord<T>(db: Dynamo, key: Record<string, string>): Promise<T | null> {
  const out = await db.doc.get({ TableName: db.tableName, Key: key, ConsistentRead: true });
  return out.Item ? stripKeys<T>(out.Item) : null;
}

/** Every item of a partition whose sort key starts with `prefix`, strongly consistent, in key order. */
export async function queryPrefix(
  db: Dynamo,
  pk: string,
  prefix: string,
  opts: { newestFirst?: boolean; attributes?: string[] } = {},
): Promise<Record<string, unknown>[]> {
  return queryAll(db, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
    ...(opts.attributes
      ? {
          ProjectionExpression: opts.attributes.map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(opts.attributes.map((a, i) => [`#a${i}`, a])),
        }
      : {}),
    ScanIndexForward: !opts.newestFirst,
  });
}

/** Every item a Query of the table finds (strongly consistent), page after page. */
export async function queryAll(
  db: Dynamo,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'ConsistentRead'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.query({
      ...input,
      TableName: db.tableName,
      ConsistentRead: true,
      ExclusiveStartKey: start,
    });
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Before retry `tries` of what a batch request left unprocessed: exponential pause, and a limit. */
export async function backOff(tries: number, failure: string): Promise<void> {
  if (tries > 8) throw new Error(failure);
  if (tries > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** tries));
}

/** Items by key (strongly consistent), in requests of at most 100 keys, retrying what DynamoDB leaves unprocessed. */
export async function batchGet(
  db: Dynamo,
  wanted: Record<string, string>[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < wanted.length; i += 100) {
    let pending: Record<string, unknown>[] = wanted.slice(i, i + 100);
    for (let tries = 0; pending.length > 0; tries++) {
      await backOff(tries, 'could not read items in a batch');
      const out = await db.doc.batchGet({ RequestItems: { [db.tableName]: { Keys: pending, ConsistentRead: true } } });
      for (const item of out.Responses?.[db.tableName] ?? []) found.set(`${String(item.pk)}|${String(item.sk)}`, item);
      pending = out.UnprocessedKeys?.[db.tableName]?.Keys ?? [];
    }
  }
  return found;
}

/**
 * A single-item write that met a transaction in progress on the same item is refused
 * (TransactionConflictException, which the SDK does not retry): the transaction ends within
 * milliseconds, so the write is tried again, a few times, after a short jittered pause.
 */
export async function retryConflicts<T>(write: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof Error && err.name === 'TransactionConflictException') || tries >= 5) throw err;
      await new Promise((r) => setTimeout(r, 5 * 2 ** tries * (0.5 + Math.random())));
    }
  }
}

/** One conditional `UpdateItem` on the table: true when it was applied, false when its condition failed. */
export async function updateIf(db: Dynamo, input: Omit<UpdateCommandInput, 'TableName'>): Promise<boolean> {
  try {
    await retryConflicts(() => db.doc.update({ TableName: db.tableName, ...input }));
    return true;
  } catch (err) {
    if (isConditionFailed(err)) return false;
    throw err;
  }
}
