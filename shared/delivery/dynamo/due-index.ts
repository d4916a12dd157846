import type { DueEntry, DueIndex } from '../sweep';
import type { DeliveryRecord } from '../deliveries';
import { batchGet, stripKeys, updateIf, type Dynamo } from '../../store/client';
import { DUE_BUCKETS, dueBucketPk, keys } from '../../store/keys';

/** The due index (GSI2): every bucket queried for entries at or before the cutoff. */
export class DynamoDueIndex implements DueIndex {
  constructor(private readonly db: Dynamo) {}

  async overdue(cutoff: Date, limit: number): Promise<DueEntry[]> {
    // Sort keys are `<sweep time>#<delivery id>`; '~' sorts after every id character.
    const upTo = `${cutoff.toISOString()}#~`;
    const pages = await Promise.all(
      Array.from({ length: DUE_BUCKETS }, (_, bucket) =>
        this.db.doc.query({
          TableName: this.db.tableName,
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk <= :upTo',
          ExpressionAttributeValues: { ':pk': dueBucketPk(bucket), ':upTo': upTo },
          Limit: limit,
        }),
      ),
    );
    return pages.flatMap((page) =>
      (page.Items ?? []).map((i) => ({
        shop_id: i.shop_id as string,
        event_id: i.event_id as string,
        id: i.id as string,
        endpoint_id: i.endpoint_id as string,
        attempts: i.attempts as number,
        status: i.status as DueEntry['status'],
        sweep_key: i.gsi2sk as string,
        next_attempt_at: (i.next_attempt_at ?? null) as string | null,
      })),
    );
  }

  postpone(entry: DueEntry, sweepAt: Date): Promise<boolean> {
    return updateIf(this.db, {
      Key: keys.delivery(entry.shop_id, entry.event_id, entry.id),
      UpdateExpression: 'SET sweep_at = :sweepAt, gsi2sk = :next',
      ConditionExpression: 'gsi2sk = :seen AND attempts = :attempts',
      ExpressionAttributeValues: { ':sweepAt': sweepAt.toISOString(), ':next': keys.dueDelivery(entry.id, sweepAt.toISOString()).gsi2sk, ':seen': entry.sweep_key, ':attempts': entry.attempts },
    });
  }

  async rows(entries: DueEntry[]): Promise<Map<string, DeliveryRecord>> {
    const found = await batchGet(this.db, entries.map((e) => keys.delivery(e.shop_id, e.event_id, e.id)));
    return new Map([...found.values()].map((item) => [String(item.id), stripKeys<DeliveryRecord>(item)]));
  }
}
