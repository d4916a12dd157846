import type { EventRecord } from '../domain/events';
import type { DecideOutcome, JobRecord, JobStatus, JobStore } from '../domain/jobs';
import type { PageRequest, TimeFilter } from '../domain/pagination';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { cancellationReasons, getRecord, stripKeys, type Dynamo } from './client';
import { eventItem } from './events';
import { gsi1Partition, shopPk, skPrefix } from './keys';
import * as keys from './item-keys';
import { queryFilteredPage, queryPage } from './pagination';
import { createdKeyQuery } from './time-range';

/**
 * Jobs read for one page under `updated_after`: a rare match costs a bounded read, and the cursor
 * goes on from there.
 */
const UPDATED_FILTER_BUDGET = 500;

/** The job item; its GSI1 key carries the status, so every status change moves it in the index. */
export function jobItem(job: JobRecord): Record<string, unknown> {
  return {
    ...keys.job(job.shop_id, job.id),
    ...keys.jobByStatus(job.shop_id, job.status, job.id),
    entity: 'job',
    ...job,
  };
}

export class DynamoJobStore implements JobStore {
  constructor(private readonly db: Dynamo) {}

  async get(shopId: string, jobId: string): Promise<JobRecord | null> {
    return getRecord<JobRecord>(this.db, keys.job(shopId, jobId));
  }

  /**
   * Newest first; with a status, through GSI1. A filter on creation time narrows the key range
   * (a job's id starts with it); `updatedAfter` filters what the range reads, a budget at a time.
   */
  async list(shopId: string, page: PageRequest, status?: JobStatus, time: TimeFilter = {}) {
    const key = createdKeyQuery(
      status ? { gsi1pk: gsi1Partition.jobsByStatus(shopId, status) } : { pk: shopPk(shopId), skPrefix: skPrefix.job },
      'job',
      time,
    );
    if (!key) return { items: [], next: undefined };
    const query = { ...key, ScanIndexForward: false };
    const result =
      time.updatedAfter === undefined
        ? await queryPage(this.db, query, page)
        : await queryFilteredPage(
            this.db,
            {
              ...query,
              FilterExpression: 'updated_at > :updatedAfter',
              ExpressionAttributeValues: {
                ...query.ExpressionAttributeValues,
                ':updatedAfter': new Date(time.updatedAfter).toISOString(),
              },
            },
            page,
            UPDATED_FILTER_BUDGET,
          );
    return { items: result.items.map((i) => stripKeys<JobRecord>(i)), next: result.next };
  }

  async decide(next: JobRecord, expectedVersion: number, event: EventRecord): Promise<DecideOutcome> {
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Put: {
              TableName: this.db.tableName,
              Item: jobItem(next),
              ConditionExpression: 'version = :v AND #status = :pending',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':v': expectedVersion, ':pending': 'pending' },
              // The job as the refusal found it: no second read, and a retried decision sees its own write.
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Put: {
              TableName: this.db.tableName,
              Item: eventItem(event),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      });
      return { ok: true };
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      // Marshalled: the document client leaves an error's item as the service sent it.
      const found = reasons[0]?.Code === 'ConditionalCheckFailed' ? reasons[0].Item : undefined;
      return {
        ok: false,
        current: found ? stripKeys<JobRecord>(unmarshall(found)) : await this.get(next.shop_id, next.id),
      };
    }
  }
}
