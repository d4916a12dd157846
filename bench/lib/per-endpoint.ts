import type { MiddlewareStack } from '@smithy/types';
import { DYNAMODB_WRITES } from '../../lib/local/stack';
import { isEndpointStateKey, skPrefix, STATE_SUFFIX } from '../../shared/store/keys';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any service's inputs and outputs
type AnyClient = { middlewareStack: MiddlewareStack<any, any> };

/** What one endpoint cost the table and the queue: writes to its own item, and queue messages for its deliveries. */
export interface EndpointTally {
  /** Requests that wrote the endpoint's items (admissions, releases, attempts' ends). */
  writes: number;
  /** Their write units; a transaction's units shared equally among the items it writes. */
  units: number;
  /** Queue messages that carried one of its deliveries (first sends, deferrals, retries). */
  messages: number;
}

type Key = { pk?: string; sk?: string };
/** The item keys a write request touches. */
function keysWritten(op: string, input: Record<string, unknown>): Key[] {
  if (op === 'UpdateItem' || op === 'DeleteItem') return [input.Key as Key];
  if (op === 'PutItem') return [input.Item as Key];
  if (op === 'TransactWriteItems') {
    return ((input.TransactItems ?? []) as Record<string, { Key?: Key; Item?: Key } | undefined>[]).flatMap((t) => {
      const w = t.Update ?? t.Put ?? t.Delete ?? t.ConditionCheck;
      return w ? [w.Key ?? w.Item ?? {}] : [];
    });
  }
  return [];
}

const unitsOf = (output: unknown): number | undefined => {
  const cc = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] } | undefined)
    ?.ConsumedCapacity;
  if (cc === undefined) return undefined;
  return (Array.isArray(cc) ? cc : [cc]).reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
};

/**
 * Per webhook endpoint (by id): the table writes to its item and the queue messages for its
 * deliveries, counted at the stack's table and queue clients. A failed conditional write
 * counts one unit per item.
 */
export function countPerEndpoint(table: AnyClient, sqs: AnyClient): Map<string, EndpointTally> {
  const tallies = new Map<string, EndpointTally>();
  const tally = (id: string) =>
    tallies.get(id) ?? (tallies.set(id, { writes: 0, units: 0, messages: 0 }), tallies.get(id) as EndpointTally);
  table.middlewareStack.add(
    (next, context) => async (args) => {
      const op = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      if (!DYNAMODB_WRITES.has(op)) return next(args);
      const keys = keysWritten(op, input);
      // The endpoint's configuration (WE#<id>) and its state item (WE#<id>#STATE).
      const ours = keys.filter((k) => typeof k.sk === 'string' && k.sk.startsWith(skPrefix.webhookEndpoint));
      if (ours.length === 0) return next(args);
      input.ReturnConsumedCapacity ??= 'TOTAL';
      // DynamoDB bills a failed conditional write too; its error reports no units.
      let units = keys.length;
      try {
        const out = await next(args);
        units = unitsOf(out.output) ?? keys.length * (op === 'TransactWriteItems' ? 2 : 1);
        return out;
      } finally {
        for (const k of ours) {
          const sk = k.sk as string;
          const t = tally(
            sk.slice(skPrefix.webhookEndpoint.length, isEndpointStateKey(sk) ? -STATE_SUFFIX.length : undefined),
          );
          t.writes++;
          t.units += units / keys.length;
        }
      }
    },
    { step: 'initialize', name: 'benchPerEndpoint' },
  );
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
      if (context.commandName === 'SendMessageCommand' || context.commandName === 'SendMessageBatchCommand') {
        for (const body of [input.MessageBody, ...(input.Entries ?? []).map((e) => e.MessageBody)]) {
          const id = body ? (JSON.parse(body) as { endpoint_id?: string }).endpoint_id : undefined;
          if (id) tally(id).messages++;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'benchPerEndpointQueue' },
  );
  return tallies;
}
