import type { RunAttempt } from '../domain/delivery-ports';
import { STATS_RETENTION_SECONDS, statsSums, windowStart, type StatsBucket, type StatsSum } from '../domain/endpoint-stats';
import type { EndpointRecord } from '../domain/webhook-endpoints';
import { logger } from '../logger';
import { cancellationReasons, updateIf, type Dynamo } from './client';
import { COUNTER, latencyCounter, statsOf } from './endpoint-state';
import { keys, shopPk, skPrefix } from './keys';
import { TABLE } from './table';

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
 * partition, expiring after two days. The current bucket's counters live on the endpoint's
 * state item, where the release of each attempt adds to them (endpoint-gate.ts); when a
 * release comes in a later bucket, `roll` moves them to their bucket's item. Attempts that
 * no release counts (not sent: `circuit_open`) are added here with `ADD`. Read with one
 * Query over the window plus the state item's current counters.
 */
export class DynamoEndpointStatsStore {
  constructor(private readonly db: Dynamo) {}

  /**
   * Stats are for people looking at an endpoint, not part of any delivery: a counter that
   * cannot be written is logged and dropped, never failing the attempt that was recorded.
   */
  async addQuietly(shopId: string, endpointId: string, attempts: readonly RunAttempt[]): Promise<void> {
    for (const { start, sum } of statsSums(attempts)) await this.addSumQuietly(shopId, endpointId, start, sum);
  }

  /** Adds a sum to the item of its bucket, as `addQuietly`. */
  async addSumQuietly(shopId: string, endpointId: string, start: string, sum: StatsSum): Promise<void> {
    try {
      await this.db.doc.update({ TableName: this.db.tableName, ...statsAddInput(shopId, endpointId, start, sum) });
    } catch (err) {
      logger.warn('Endpoint stats not counted', { shop_id: shopId, endpoint_id: endpointId, error: err as Error });
    }
  }

  /**
   * Moves the counters the state item holds (as `endpoint` read them) to their bucket's item
   * and begins bucket `to` there, only if nothing was added since the read (attempts and
   * failed deliveries as read: every count adds to one of them): so each count is in exactly
   * one place, whoever rolls. One transaction, once per bucket and endpoint that had attempts
   * in it; a single write when there is nothing to move. False when the state had changed.
   */
  async roll(endpoint: EndpointRecord, to: string): Promise<boolean> {
    const from = endpoint.stats;
    if (!from || (from.bucket !== null && from.bucket >= to)) return false;
    const removes = Object.keys(from.latency).map((b) => latencyCounter(b));
    const state = {
      Key: keys.endpointState(endpoint.shop_id, endpoint.id),
      UpdateExpression: `SET stats_bucket = :to, ${Object.values(COUNTER).map((name) => `${name} = :zero`).join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: from.bucket === null ? 'attribute_exists(pk) AND attribute_not_exists(stats_bucket)' : `stats_bucket = :from AND ${COUNTER.attempts} = :attempts AND ${COUNTER.deliveries_failed} = :failedDeliveries`,
      ExpressionAttributeValues: { ':to': to, ':zero': 0, ...(from.bucket === null ? {} : { ':from': from.bucket, ':attempts': from.attempts, ':failedDeliveries': from.deliveries_failed }) },
    };
    if (from.bucket === null || from.attempts + from.deliveries_failed === 0) return updateIf(this.db, state);
    const table = { TableName: this.db.tableName };
    try {
      await this.db.doc.transactWrite({ TransactItems: [{ Update: { ...table, ...state } }, { Update: { ...table, ...statsAddInput(endpoint.shop_id, endpoint.id, from.bucket, from) } }] });
      return true;
    } catch (err) {
      if (cancellationReasons(err)) return false;
      throw err;
    }
  }

  /** Every bucket of the window ending `now` (at most 145 small items, one page), the state item's current one among them. */
  async window(shopId: string, endpointId: string, now: Date): Promise<StatsBucket[]> {
    const [buckets, { Item: state }] = await Promise.all([
      this.bucketItems(shopId, endpointId, now),
      this.db.doc.get({ TableName: this.db.tableName, Key: keys.endpointState(shopId, endpointId), ConsistentRead: true }),
    ]);
    const held = state ? statsOf(state) : null;
    if (held?.bucket && held.bucket >= windowStart(now)) buckets.push(held);
    return buckets;
  }

  private async bucketItems(shopId: string, endpointId: string, now: Date): Promise<StatsBucket[]> {
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
