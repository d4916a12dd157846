import { logger } from './logger';

/** The partial batch response of the SQS and DynamoDB stream event sources: only these records come back. */
export interface BatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/**
 * A Lambda batch handler that reports failures per record. `read` turns each record into
 * its item (null: nothing to do; a throw: that record fails); `process` handles the items
 * of the batch together and settles one result per item, in order; a rejected one is
 * reported, so its record alone is retried. If `process` itself throws, every record it
 * was given comes back.
 */
export function batchHandler<R, T>(opts: {
  name: string;
  id: (record: R) => string;
  read: (record: R) => T | null;
  process: (items: T[]) => Promise<PromiseSettledResult<unknown>[]>;
}): (event: { Records: R[] }) => Promise<BatchResponse> {
  return async (event) => {
    const failed = new Set<string>();
    const items: { id: string; item: T }[] = [];
    for (const record of event.Records) {
      try {
        const item = opts.read(record);
        if (item !== null) items.push({ id: opts.id(record), item });
      } catch (err) {
        logger.error(`${opts.name}: unreadable record`, { error: err as Error });
        failed.add(opts.id(record));
      }
    }
    try {
      const results = await opts.process(items.map((i) => i.item));
      results.forEach((result, i) => result.status === 'rejected' && failed.add((items[i] as { id: string }).id));
    } catch (err) {
      logger.error(`${opts.name} batch failed`, { error: err as Error });
      for (const { id } of items) failed.add(id);
    }
    // In record order, as Lambda's own reports are.
    return {
      batchItemFailures: event.Records.map(opts.id)
        .filter((id) => failed.has(id))
        .map((itemIdentifier) => ({ itemIdentifier })),
    };
  };
}
