import { EVENT_RETENTION_SECONDS } from '../../domain/events';
import type { RecoveryRecord, RecoveryStore } from '../recovery-job';
import { getRecord, isConditionFailed, retryConflicts, stripKeys, updateIf, type Dynamo } from '../../store/client';
import { gsi1Partition, keys } from '../../store/keys';
import { TABLE } from '../../store/table';

/** A running recovery carries its entry in the sweeper's list of running ones; the write that ends it drops it. */
function recoveryItem(r: RecoveryRecord): Record<string, unknown> {
  return {
    ...keys.recovery(r.shop_id, r.id),
    ...(r.status === 'running' && r.sweep_at ? keys.runningRecovery(r.id, r.sweep_at) : {}),
    entity: 'recovery',
    // As long as the events it recovers are kept.
    [TABLE.ttlAttribute]: Math.floor(Date.parse(r.created_at) / 1000) + EVENT_RETENTION_SECONDS,
    ...r,
  };
}

const STILL_AT = {
  ConditionExpression: 'pages = :pages AND #status = :running',
  ExpressionAttributeNames: { '#status': 'status' },
};

/**
 * Recoveries (shared/delivery/recovery-job.ts). Every write of a running one is a whole item
 * (`PutItem`) or a change of its sweep time, each a stream record the fan-out's filter
 * passes: that record is what wakes the worker for the next page.
 */
export class DynamoRecoveryStore implements RecoveryStore {
  constructor(private readonly db: Dynamo) {}

  async create(recovery: RecoveryRecord): Promise<void> {
    await this.db.doc.put({
      TableName: this.db.tableName,
      Item: recoveryItem(recovery),
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  }

  get(shopId: string, id: string): Promise<RecoveryRecord | null> {
    return getRecord<RecoveryRecord>(this.db, keys.recovery(shopId, id));
  }

  async advance(current: RecoveryRecord, next: RecoveryRecord): Promise<boolean> {
    try {
      await retryConflicts(() =>
        this.db.doc.put({
          TableName: this.db.tableName,
          Item: recoveryItem(next),
          ...STILL_AT,
          ExpressionAttributeValues: { ':pages': current.pages, ':running': 'running' },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
  }

  async stalled(now: Date, limit: number): Promise<RecoveryRecord[]> {
    const out = await this.db.doc.query({
      TableName: this.db.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk <= :cutoff',
      // `~` sorts after every id character: every entry due at or before now.
      ExpressionAttributeValues: { ':pk': gsi1Partition.runningRecoveries(), ':cutoff': `${now.toISOString()}#~` },
      Limit: limit,
    });
    return (out.Items ?? []).map((i) => stripKeys<RecoveryRecord>(i));
  }

  nudge(current: RecoveryRecord, sweepAt: string): Promise<boolean> {
    return updateIf(this.db, {
      Key: keys.recovery(current.shop_id, current.id),
      UpdateExpression: 'SET sweep_at = :sweep, gsi1sk = :sk',
      ...STILL_AT,
      ExpressionAttributeValues: {
        ':sweep': sweepAt,
        ':sk': keys.runningRecovery(current.id, sweepAt).gsi1sk,
        ':pages': current.pages,
        ':running': 'running',
      },
    });
  }
}
