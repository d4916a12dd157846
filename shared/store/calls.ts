import type { CallBatch, CallRecord, CallStore, SummaryRecord, TooLarge, TranscriptRecord } from '../domain/calls';
import type { PageRequest, TimeFilter } from '../domain/pagination';
import { cancellationReasons, getRecord, stripKeys, type Dynamo } from './client';
import { eventItem } from './events';
import { isItemTooLarge, itemBytes, MAX_ITEM_BYTES } from './item-size';
import { jobItem } from './jobs';
import { keys, shopPk, skPrefix } from './keys';
import { queryPage } from './pagination';
import { createdKeyQuery } from './time-range';

/** An item of the batch, and the payload field it holds. */
type StoredPart = readonly [Record<string, unknown>, string | null];

export class DynamoCallStore implements CallStore {
  constructor(private readonly db: Dynamo) {}

  /**
   * One TransactWriteItems: the external-id marker (first, so a duplicate is recognisable),
   * the call, transcript, summary, jobs, the shop's credit debit, and every event. Either
   * all of it is stored or none of it. An item over the size limit is found before anything is
   * sent (named by its field in the payload); DynamoDB's own refusal of one answers the same.
   */
  async record(batch: CallBatch) {
    const TableName = this.db.tableName;
    const { shopId, call } = batch;
    // Each item, with the payload field it holds (null: several, or none on its own).
    const stored: StoredPart[] = [
      [{ ...keys.callExternal(shopId, call.external_id), entity: 'call_external', call_id: call.id }, 'external_id'],
      [{ ...keys.call(shopId, call.id), entity: 'call', ...call }, null],
      ...(batch.transcript
        ? [[{ ...keys.transcript(shopId, call.id), entity: 'transcript', ...batch.transcript }, 'transcript'] as const]
        : []),
      ...(batch.summary
        ? [[{ ...keys.summary(shopId, call.id), entity: 'call_summary', ...batch.summary }, 'summary'] as const]
        : []),
      ...batch.jobs.map((job, i) => [jobItem(job), `jobs.${i}`] as const),
      ...batch.events.map((event) => [eventItem(event), null] as const),
    ];
    const oversized = firstOversized(stored);
    if (oversized) return oversized;
    const put = (Item: Record<string, unknown>) => ({
      Put: { TableName, Item, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    const items = [
      ...stored.map(([item]) => put(item)),
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
      if (isItemTooLarge(err)) return { status: 'too_large' as const, param: null, bytes: null, limit: MAX_ITEM_BYTES };
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

  /** Newest first; a filter on creation time narrows the key range (a call's id starts with it). */
  async list(shopId: string, page: PageRequest, time: TimeFilter = {}) {
    const key = createdKeyQuery({ pk: shopPk(shopId), skPrefix: skPrefix.call }, 'call', time);
    if (!key) return { items: [], next: undefined };
    const result = await queryPage(this.db, { ...key, ScanIndexForward: false }, page);
    return { items: result.items.map((i) => stripKeys<CallRecord>(i)), next: result.next };
  }
}

/** The first item over the limit, as the store's answer, or null when every item fits. */
function firstOversized(stored: StoredPart[]): TooLarge | null {
  for (const [item, param] of stored) {
    const bytes = itemBytes(item);
    if (bytes > MAX_ITEM_BYTES) return { status: 'too_large', param, bytes, limit: MAX_ITEM_BYTES };
  }
  return null;
}
