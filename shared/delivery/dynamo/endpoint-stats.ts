import type { RunAttempt } from '../ports';
import { STATS_RETENTION_SECONDS, statsSums, windowStart, type StatsBucket, type StatsSum } from '../endpoint-stats';
import type { EndpointRecord } from '../../domain/webhook-endpoints';
import { logger } from '../../logger';
import { updateIf, type Dynamo } from '../../store/client';
import { COUNTER, latencyCounter, statsOf } from './endpoint-state';
import { keys, shopPk, skPrefix } from '../../store/keys';
import { TABLE } from '../../store/table';

/**
 * The `ADD` of attempts' counts to their endpoint's bucket starting at `start` (also written inside
 * an attempt's transaction).
 */
export function statsAddInput(shopId: string, endpointId: string, start: string, sum: StatsSum) {
  const adds = ['attempts :attempts', 'succeeded :succeeded', 'failed :failed', 'deliveries_failed :deliveriesFailed'];
  const values: Record<string, unknown> = {
    ':attempts': sum.attempts,
    ':succeeded': sum.succeeded,
    ':failed': sum.failed,
    ':deliveriesFailed': sum.deliveries_failed,
  };
  for (const [bucket, count] of Object.entries(sum.latency)) {
    adds.push(`l${bucket} :l${bucket}`);
    values[`:l${bucket}`] = count;
  }
  return {
    Key: keys.endpointStats(shopId, endpointId, start),
    UpdateExpression: `ADD ${adds.join(', ')} SET entity = :entity, #ttl = :ttl`,
    ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
    ExpressionAttributeValues: {
      ...values,
      ':entity': 'endpoint_stats',
      ':ttl': Math.floor(Date.parse(start) / 1000) + STATS_RETENTION_SECONDS,
    },
  };
}

/**
 * The write that copies the counters a state item holds for bucket `start` onto that bucket's
 * item, as absolute values under their own names (`r_…`, beside the `ADD`ed ones): written
 * again with later values by a roll retried after a crash, it never counts twice. Counters only
 * grow within a bucket, so a snapshot older than the one there (a slower consumer rolling the
 * same bucket) is refused rather than written over it.
 */
function statsSnapshotInput(shopId: string, endpointId: string, start: string, sum: StatsSum) {
  const sets = [
    'r_attempts = :attempts',
    'r_succeeded = :succeeded',
    'r_failed = :failed',
    'r_deliveries_failed = :deliveriesFailed',
  ];
  const values: Record<string, unknown> = {
    ':attempts': sum.attempts,
    ':succeeded': sum.succeeded,
    ':failed': sum.failed,
    ':deliveriesFailed': sum.deliveries_failed,
  };
  for (const [bucket, count] of Object.entries(sum.latency)) {
    sets.push(`rl${bucket} = :l${bucket}`);
    values[`:l${bucket}`] = count;
  }
  return {
    Key: keys.endpointStats(shopId, endpointId, start),
    UpdateExpression: `SET ${sets.join(', ')}, entity = :entity, #ttl = :ttl`,
    ConditionExpression:
      'attribute_not_exists(r_attempts) OR (r_attempts <= :attempts AND r_deliveries_failed <= :deliveriesFailed)',
    ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
    ExpressionAttributeValues: {
      ...values,
      ':entity': 'endpoint_stats',
      ':ttl': Math.floor(Date.parse(start) / 1000) + STATS_RETENTION_SECONDS,
    },
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
export class DynamoEndpointStatsCounterStore {
  constructor(protected readonly db: Dynamo) {}

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
   * and begins bucket `to` there. Two single-item writes, not a transaction (which bills each
   * item twice, and would make an endpoint with a delivery every quarter of an hour pay 6 write
   * units a delivery): first the counters as a snapshot of absolute values on the bucket's item,
   * then the state item begins the new bucket, only if nothing was added since the read
   * (attempts and failed deliveries as read: every count adds to one of them). Until that second
   * write the bucket's counts are in both places, and the reader takes the state item's (see
   * `window`); a crash between them leaves it so until the next roll writes the snapshot again.
   * False when the state had changed.
   */
  async roll(endpoint: EndpointRecord, to: string): Promise<boolean> {
    const from = endpoint.stats;
    if (!from || (from.bucket !== null && from.bucket >= to)) return false;
    const removes = Object.keys(from.latency).map((b) => latencyCounter(b));
    const state = {
      Key: keys.endpointState(endpoint.shop_id, endpoint.id),
      UpdateExpression: `SET stats_bucket = :to, ${Object.values(COUNTER)
        .map((name) => `${name} = :zero`)
        .join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression:
        from.bucket === null
          ? 'attribute_exists(pk) AND attribute_not_exists(stats_bucket)'
          : `stats_bucket = :from AND ${COUNTER.attempts} = :attempts AND ` +
            `${COUNTER.deliveries_failed} = :failedDeliveries`,
      ExpressionAttributeValues: {
        ':to': to,
        ':zero': 0,
        ...(from.bucket === null
          ? {}
          : { ':from': from.bucket, ':attempts': from.attempts, ':failedDeliveries': from.deliveries_failed }),
      },
    };
    if (from.bucket !== null && from.attempts + from.deliveries_failed > 0) {
      // Refused: a later snapshot is there, so the state has moved on and the write below is refused too.
      await updateIf(this.db, statsSnapshotInput(endpoint.shop_id, endpoint.id, from.bucket, from));
    }
    return updateIf(this.db, state);
  }
}

/** The counters and their reader (GET …/stats): apart, so the consumer's bundle carries only what it writes. */
export class DynamoEndpointStatsStore extends DynamoEndpointStatsCounterStore {
  /**
   * Every bucket of the window ending `now` (at most 145 small items, one page), the state item's
   * current one among them.
   */
  async window(shopId: string, endpointId: string, now: Date): Promise<StatsBucket[]> {
    const [buckets, { Item: state }] = await Promise.all([
      this.bucketItems(shopId, endpointId, now),
      this.db.doc.get({
        TableName: this.db.tableName,
        Key: keys.endpointState(shopId, endpointId),
        ConsistentRead: true,
      }),
    ]);
    const held = state ? statsOf(state) : null;
    const current = held?.bucket && held.bucket >= windowStart(now) ? held.bucket : null;
    // The bucket the state item still holds counts from there: a snapshot of it on its item is a roll not finished.
    const counted = buckets.map(({ start, added, snapshot }) => (start === current ? added : plus(added, snapshot)));
    if (held && current) counted.push(held);
    return counted;
  }

  private async bucketItems(shopId: string, endpointId: string, now: Date): Promise<BucketItem[]> {
    const prefix = skPrefix.endpointStats(endpointId);
    const buckets: BucketItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.doc.query({
        TableName: this.db.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': shopPk(shopId),
          ':from': `${prefix}${windowStart(now)}`,
          ':to': `${prefix}~`,
        },
        ExclusiveStartKey: start,
      });
      buckets.push(
        ...(out.Items ?? []).map((item) => ({
          start: String(item.sk).slice(prefix.length),
          added: bucketOf(item, ''),
          snapshot: bucketOf(item, 'r'),
        })),
      );
      start = out.LastEvaluatedKey;
    } while (start);
    return buckets;
  }
}

/** A bucket's item: what was `ADD`ed to it, and the snapshot a roll wrote (`r_…`). */
interface BucketItem {
  start: string;
  added: StatsBucket;
  snapshot: StatsBucket;
}

/** The counters of a bucket item under one naming: `''` the added ones, `'r'` the snapshot's. */
function bucketOf(item: Record<string, unknown>, prefix: '' | 'r'): StatsBucket {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const named = (name: string) => n(item[prefix ? `${prefix}_${name}` : name]);
  const latency: Record<number, number> = {};
  const pattern = new RegExp(`^${prefix}l(\\d+)$`);
  for (const [name, value] of Object.entries(item)) {
    const m = pattern.exec(name);
    if (m) latency[Number(m[1])] = n(value);
  }
  return {
    attempts: named('attempts'),
    succeeded: named('succeeded'),
    failed: named('failed'),
    deliveries_failed: named('deliveries_failed'),
    latency,
  };
}

function plus(a: StatsBucket, b: StatsBucket): StatsBucket {
  const latency: Record<number, number> = { ...a.latency };
  for (const [bucket, count] of Object.entries(b.latency))
    latency[Number(bucket)] = (latency[Number(bucket)] ?? 0) + count;
  return {
    attempts: a.attempts + b.attempts,
    succeeded: a.succeeded + b.succeeded,
    failed: a.failed + b.failed,
    deliveries_failed: a.deliveries_failed + b.deliveries_failed,
    latency,
  };
}
