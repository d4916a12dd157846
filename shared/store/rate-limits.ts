import { gcra, type Clock, type RateDecision, type RateLimit, type RateLimiter } from '../domain/rate-limits';
import { isConditionFailed, type Dynamo } from './client';
import { keys } from './keys';
import { TABLE } from './table';

type Judgement = { decision: RateDecision; tat: number };

/** A bucket outlives its last request by this long, then TTL removes it (it would be full again anyway). */
const IDLE_SECONDS = 120;

/**
 * GCRA buckets in the table, shared by every Lambda instance (and the local stack). An
 * admitted request is one conditional UpdateItem: "start afresh" when the bucket is idle,
 * else "move tat one interval on" while it is under its ceiling (two when this process
 * guessed the branch wrong); a refused one is at most two failed conditions, or none, at
 * each of its (at most two) judgements.
 */
export class DynamoRateLimiter implements RateLimiter {
  /**
   * The last tat this process saw of each bucket. tat only grows (TTL removes a bucket only
   * long after it is idle), so it is a lower bound of the true one: a bucket seen over its
   * ceiling is refused without a write, and a busy one goes straight to the "move on" branch.
   */
  private readonly seen = new Map<string, number>();

  constructor(private readonly db: Dynamo) {}

  async take(bucket: string, limit: RateLimit, clock: Clock): Promise<RateDecision> {
    const arrival = await this.takeAt(bucket, limit, clock());
    if (arrival.decision.allowed) return arrival.decision;
    // Concurrent requests write in any order: one judged at its arrival may find tat moved by a
    // request that arrived after it. Judged again at the current time, a burst is never cut short.
    const now = clock();
    if (arrival.tat > gcra(limit, now).ceiling) return arrival.decision;
    return (await this.takeAt(bucket, limit, now)).decision;
  }

  /** One judgement at `nowMs`: the decision, and the bucket's tat as this process last saw it. */
  private async takeAt(bucket: string, limit: RateLimit, nowMs: number): Promise<Judgement> {
    const g = gcra(limit, nowMs);
    const known = this.seen.get(bucket) ?? 0;
    if (known > g.ceiling)
      return { decision: { allowed: false, retryAfterSeconds: g.retryAfterSeconds(known) }, tat: known };
    const expires = Math.ceil(nowMs / 1000) + IDLE_SECONDS;
    const fresh = () =>
      this.update(bucket, 'SET tat = :fresh, #ttl = :exp', 'attribute_not_exists(tat) OR tat < :now', {
        ':fresh': g.fresh,
        ':now': nowMs,
        ':exp': expires,
      });
    const moveOn = () =>
      this.update(bucket, 'SET tat = tat + :interval, #ttl = :exp', 'tat BETWEEN :now AND :ceiling', {
        ':interval': g.intervalMs,
        ':now': nowMs,
        ':ceiling': g.ceiling,
        ':exp': expires,
      });
    // Two branches, each one conditional write; a failed condition returns the bucket's tat, which
    // picks the other or refuses.
    const branches = known >= nowMs ? [moveOn, fresh] : [fresh, moveOn];
    let tat = 0;
    for (const branch of branches) {
      const out = await branch();
      if (out.written) return this.remember(bucket, out.tat, { allowed: true });
      tat = out.tat;
      if (tat > g.ceiling) break;
    }
    // Over the ceiling, or (clocks of two instances apart) just under now: refuse, it is at most a second.
    return this.remember(bucket, tat, {
      allowed: false,
      retryAfterSeconds: g.retryAfterSeconds(Math.max(tat, g.ceiling)),
    });
  }

  private remember(bucket: string, tat: number, decision: RateDecision): Judgement {
    // A cache, not a record: dropping it costs one extra write per bucket.
    if (this.seen.size > 10_000) this.seen.clear();
    if (tat > (this.seen.get(bucket) ?? 0)) this.seen.set(bucket, tat);
    return { decision, tat };
  }

  /** Writes, or reports the bucket's current tat when the condition does not hold. */
  private async update(
    bucket: string,
    expression: string,
    condition: string,
    values: Record<string, number>,
  ): Promise<{ written: boolean; tat: number }> {
    try {
      const out = await this.db.doc.update({
        TableName: this.db.tableName,
        Key: keys.rateBucket(bucket),
        UpdateExpression: expression,
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: values,
        ReturnValues: 'UPDATED_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { written: true, tat: Number(out.Attributes?.tat ?? 0) };
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      const old = err.Item?.tat as { N?: string } | undefined;
      return { written: false, tat: Number(old?.N ?? 0) };
    }
  }
}
