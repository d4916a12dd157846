import type { CallBatch, CallRecord, CallStore, SummaryRecord, TranscriptRecord } from '../domain/calls';
import type { PageRequest } from '../domain/pagination';
import { cancellationReasons, getRecord, stripKeys, type Dynamo } from './client';
import { eventItem } from './events';
import { jobItem } from './jobs';
import { shopPk, skPrefix } from './keys';
import * as keys from './item-keys';
import { queryPage } from './pagination';

export class DynamoCallStore implements CallStore {
  constructor(private readonly db: Dynamo) {}

  /**
   * One TransactWriteItems: the external-id marker (first, so a duplicate is recognisable),
   * the call, transcript, summary, jobs, the shop's credit debit, and every event. Either
   * all of it is stored or none of it.
   */
  async record(batch: CallBatch) {
    const TableName = this.db.tableName;
    const { shopId, call } = batch;
    const put = (Item: Record<string, unknown>, condition = true) => ({
      Put: { TableName, Item, ...(condition ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}) },
    });
    const items = [
      put({ ...keys.callExternal(shopId, call.external_id), entity: 'call_external', call_id: call.id }),
      put({ ...keys.call(shopId, call.id), entity: 'call', ...call }),
      ...(batch.transcript
        ? [put({ ...keys.transcript(shopId, call.id), entity: 'transcript', ...batch.transcript })]
        : []),
      ...(batch.summary ? [put({ ...keys.summary(shopId, call.id), entity: 'call_summary', ...batch.summary })] : []),
      ...batch.jobs.map((job) => put(jobItem(job))),
      ...batch.events.map((event) => put(eventItem(event))),
      {
        Update: {
          TableName,
          Key: keys.shop(shopId),
          UpdateExpression:
            'SET credits.balance = credits.balance - :c, credits.used_this_period = credits.used_this_period + :c',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':c': batch.credits },
        },
      },
    ];
    try {
      await this.db.doc.transactWrite({ TransactItems: items });
      return { status: 'created' as const };
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      if (reasons[0]?.Code === 'ConditionalCheckFailed') {
        const marker = await this.db.doc.get({
          TableName,
          Key: keys.callExternal(shopId, call.external_id),
          ConsistentRead: true,
        });
        return { status: 'duplicate' as const, callId: String(marker.Item?.call_id) };
      }
      if (reasons[items.length - 1]?.Code === 'ConditionalCheckFailed') return { status: 'shop_missing' as const };
      throw err;
    }
  }

  get(shopId: string, callId: string) {
    return getRecord<CallRecord>(this.db, keys.call(shopId, callId));
  }
  getTranscript(shopId: string, callId: string) {
    return getRecord<TranscriptRecord>(this.db, keys.transcript(shopId, callId));
  }
  getSummary(shopId: string, callId: string) {
    return getRecord<SummaryRecord>(this.db, keys.summary(shopId, callId));
  }

  async list(shopId: string, page: PageRequest) {
    const result = await queryPage(
      this.db,
      {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': shopPk(shopId), ':prefix': skPrefix.call },
        ScanIndexForward: false,
      },
      page,
    );
    return { items: result.items.map((i) => stripKeys<CallRecord>(i)), next: result.next };
  }
}
