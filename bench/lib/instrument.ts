import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';

type AnyClient = Pick<DynamoDBClient | SQSClient, 'middlewareStack'>;

export interface CallCounter {
  /** Requests by operation name, e.g. { PutItem: 16, Query: 1 }. */
  calls: Map<string, number>;
  /** Items written, by operation (a BatchWriteItem or TransactWriteItems counts each item). */
  items: Map<string, number>;
  reset(): void;
}

const itemsWritten = (command: string, input: Record<string, unknown>): number => {
  if (command === 'BatchWriteItemCommand') return Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>).reduce((n, r) => n + r.length, 0);
  if (command === 'TransactWriteItemsCommand') return ((input.TransactItems ?? []) as unknown[]).length;
  if (command === 'SendMessageBatchCommand') return ((input.Entries ?? []) as unknown[]).length;
  return 1;
};

/**
 * Counts every request an SDK client sends, at the serialize step (after the document
 * client has translated its commands), so the figures are what reached the service.
 */
export function countCalls(client: AnyClient): CallCounter {
  const counter: CallCounter = {
    calls: new Map(),
    items: new Map(),
    reset: () => {
      counter.calls.clear();
      counter.items.clear();
    },
  };
  (client.middlewareStack as DynamoDBClient['middlewareStack']).add(
    (next, context) => async (args) => {
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      counter.calls.set(name, (counter.calls.get(name) ?? 0) + 1);
      counter.items.set(name, (counter.items.get(name) ?? 0) + itemsWritten(context.commandName ?? '', args.input as Record<string, unknown>));
      return next(args);
    },
    { step: 'initialize', name: 'benchCallCounter' },
  );
  return counter;
}

export { DYNAMODB_WRITES } from '../../lib/local/stack';
