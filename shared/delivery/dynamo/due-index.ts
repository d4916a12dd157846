import type { DueEntry, DueIndex } from '../sweep';
import type { DeliveryRecord } from '../records';
import { batchGet, stripKeys, updateIf, type Dynamo } from '../../store/client';
import { DUE_BUCKETS, dueBucketPk, keys } from '../../store/keys';

/**
 * The write that takes a fast-path row off its fast path: into both indexes, for the sweeper at
 * `sweepAt`, only while it is open and in neither (a row recorded meanwhile is there already,
 * or ended). Made when its message is put off (a deferral), found in the delivery dead-letter
 * queue, or lost with the local stack's queue.
 */
export function indexInput(d: Pick<DeliveryRecord, 'shop_id' | 'id' | 'endpoint_id'>, sweepAt: string) {
  const entries = {
    ...keys.openDeliveryByEndpoint(d.shop_id, d.endpoint_id, d.id),
    ...keys.dueDelivery(d.id, sweepAt),
  };
  return {
    Key: keys.delivery(d.shop_id, d.endpoint_id, d.id),
    UpdateExpression: 'SET sweep_at = :sweep, gsi1pk = :openPk, gsi1sk = :openSk, gsi2pk = :duePk, gsi2sk = :dueSk',
    ConditionExpression: '#status IN (:pending, :retrying) AND attribute_not_exists(gsi2pk)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pending': 'pending',
      ':retrying': 'retrying',
      ':sweep': sweepAt,
      ':openPk': entries.gsi1pk,
      ':openSk': entries.gsi1sk,
      ':duePk': entries.gsi2pk,
      ':dueSk': entries.gsi2sk,
    },
  };
}

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
    return pages
      .flatMap((page) => page.Items ?? [])
      .map((i) => ({
        shop_id: i.shop_id as string,
        event_id: i.event_id as string,
        id: i.id as string,
        endpoint_id: i.endpoint_id as string,
        attempts: i.attempts as number,
        status: i.status as DueEntry['status'],
        sweep_key: i.gsi2sk as string,
        next_attempt_at: (i.next_attempt_at ?? null) as string | null,
      }));
  }

  postpone(entry: DueEntry, sweepAt: Date): Promise<boolean> {
    return updateIf(this.db, {
      Key: keys.delivery(entry.shop_id, entry.endpoint_id, entry.id),
      UpdateExpression: 'SET sweep_at = :sweepAt, gsi2sk = :next',
      ConditionExpression: 'gsi2sk = :seen AND attempts = :attempts',
      ExpressionAttributeValues: {
        ':sweepAt': sweepAt.toISOString(),
        ':next': keys.dueDelivery(entry.id, sweepAt.toISOString()).gsi2sk,
        ':seen': entry.sweep_key,
        ':attempts': entry.attempts,
      },
    });
  }

  enter(ref: { shop_id: string; event_id: string; id: string; endpoint_id: string }, sweepAt: Date): Promise<boolean> {
    return updateIf(this.db, indexInput(ref, sweepAt.toISOString()));
  }

  async rows(entries: DueEntry[]): Promise<Map<string, DeliveryRecord>> {
    const found = await batchGet(
      this.db,
      entries.map((e) => keys.delivery(e.shop_id, e.endpoint_id, e.id)),
    );
    return new Map([...found.values()].map((item) => [String(item.id), stripKeys<DeliveryRecord>(item)]));
  }
}
