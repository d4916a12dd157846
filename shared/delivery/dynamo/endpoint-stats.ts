import type { RunAttempt } from '../delivery-ports';
import { STATS_RETENTION_SECONDS, statsSums, windowStart, type StatsBucket, type StatsSum } from '../endpoint-stats';
import { logger } from '../../logger';
import type { Dynamo } from '../../store/client';
import { keys, shopPk, skPrefix } from '../../store/keys';
import { TABLE } from '../../store/table';

/** The `ADD` of attempts' counts to their endpoint's bucket starting at `start` (also written inside an attempt's transaction). */
export function statsAddInput(shopId: string, endpointId: string, start: string, sum: StatsSum) {
  const adds = ['attempts :attempts', 'succeeded :succeeded', 'failed :failed', 'deliveries_failed :deliveriesFailed'];
  const values: Record<string, unknown> = { ':attempts': sum.attempts, ':succeeded': sum.succeeded, ':failed': sum.failed, ':deliveriesFailed': sum.deliveries_failed };
  for (const [bucket, count] of Object.entries(sum.latency)) {
    adds.push(`l${bucket} :l${bucket}`);
    values[`:l${bucket}`] = count;
  }
  return {
    Key: keys.endpointStats(shopId, endpointId, start),
    UpdateExpression: `ADD ${adds.join(', ')} SET entity = :entity, #ttl = :ttl`,
    ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
    ExpressionAttributeValues: { ...values, ':entity': 'endpoint_stats', ':ttl': Math.floor(Date.parse(start) / 1000) + STATS_RETENTION_SECONDS },
  };
}

/**
 * The counter items of endpoint stats: one per endpoint and 10-minute bucket, in the shop's
 * partition, expiring after two days. Written with `ADD` (in the transaction that records
 * the attempt, or one small UpdateItem after it: concurrent attempts never lose a count);
 * read with one Query over the window.
 */
export class DynamoEndpointStatsStore {
  constructor(private readonly db: Dynamo) {}

  /** Adds what the attempts count, one write per bucket they fall in. */
  async add(shopId: string, endpointId: string, attempts: readonly RunAttempt[]): Promise<void> {
    for (const { start, sum } of statsSums(attempts)) await this.db.doc.update({ TableName: this.db.tableName, ...statsAddInput(shopId, endpointId, start, sum) });
  }

  /**
   * Stats are for people looking at an endpoint, not part of any delivery: a counter that
   * cannot be written is logged and dropped, never failing the attempt that was recorded.
   */
  async addQuietly(shopId: string, endpointId: string, attempts: readonly RunAttempt[]): Promise<void> {
    try {
      await this.add(shopId, endpointId, attempts);
    } catch (err) {
      logger.warn('Endpoint stats not counted', { shop_id: shopId, endpoint_id: endpointId, error: err as Error });
    }
  }

  /** Every bucket of the window ending `now` (at most 145 small items, one page). */
  async window(shopId: string, endpointId: string, now: Date): Promise<StatsBucket[]> {
    const prefix = skPrefix.endpointStats(endpointId);
    const buckets: StatsBucket[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': shopPk(shopId), ':from': `${prefix}${windowStart(now)}`, ':to': `${prefix}~` },
        ExclusiveStartKey: start,
      });
      buckets.push(...(out.Items ?? []).map(bucketOf));
      start = out.LastEvaluatedKey;
    } while (start);
    return buckets;
  }
}

function bucketOf(item: Record<string, unknown>): StatsBucket {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const latency: Record<number, number> = {};
  for (const [name, value] of Object.entries(item)) {
    const m = /^l(\d+)$/.exec(name);
    if (m) latency[Number(m[1])] = n(value);
  }
  return { attempts: n(item.attempts), succeeded: n(item.succeeded), failed: n(item.failed), deliveries_failed: n(item.deliveries_failed), latency };
}
