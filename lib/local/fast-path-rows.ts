import type { Dynamo } from '../../shared/store/client';
import { DynamoDueIndex } from '../../shared/delivery/dynamo/due-index';

/**
 * At a start of the local stack on a table that outlived its last run: every open delivery row
 * still on its fast path (pending, in no index: its message was its only wake-up) goes into the
 * due index, due now, so the first sweep sends it. In AWS the message is durable (SQS, its
 * redelivery, the dead-letter queue the sweeper drains); here the queue and its timers lived in
 * memory and died with the process, so the table, the truth, stands in for them. A Scan, as
 * no Lambda role may make: it makes up for the local queue's durability, once per start,
 * before the pollers run (so no row of this run is taken for a lost one). Returns how many.
 */
export async function indexFastPathRowsOfLastRun(db: Dynamo, now: Date): Promise<number> {
  const due = new DynamoDueIndex(db);
  let indexed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.scan({
      TableName: db.tableName,
      FilterExpression: 'entity = :delivery AND #status = :pending AND attribute_not_exists(gsi2pk)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':delivery': 'delivery', ':pending': 'pending' },
      ProjectionExpression: 'shop_id, event_id, id, endpoint_id',
      ExclusiveStartKey: start,
    });
    for (const row of page.Items ?? []) {
      if (await due.enter(row as { shop_id: string; event_id: string; id: string; endpoint_id: string }, now))
        indexed++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return indexed;
}
