import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DeliveryRecord } from '../records';
import type { AttemptEnd, AttemptLedger, AttemptUpdate, Carried, Finished, RunSlot } from '../ports';
import { statsSums } from '../endpoint-stats';
import type { EndpointRecord } from '../../domain/webhook-endpoints';
import { cancellationReasons, isConditionFailed, retryConflicts, updateIf, type Dynamo } from '../../store/client';
import { logger } from '../../logger';
import { logOnCancelledInput, recordAttemptInput } from './attempt-deliveries';
import { DynamoEndpointStatsCounterStore } from './endpoint-stats';
import { DynamoEndpointGateStore, releaseInput, type BucketStats } from './endpoint-gate';
import { withState } from './endpoint-state';

/**
 * The end of a sent attempt. Alone on its endpoint in the batch (one event at a time), it is
 * the single-item writes: the row records it (only over attempt N-1), then the endpoint's
 * state item drops the lease with its health and, if the row's write recorded it, counts it
 * in the stats. A transaction would save a request but bills every item twice, and the
 * separate writes are correct on their own: each is conditional and the release reads back
 * what it changed.
 *
 * The write that ends the last of a batch's runs of successes on an endpoint also ends the
 * slots the other runs held and counts the attempts they recorded on their rows alone
 * (`recordInRun`). That one is a TransactWriteItems of row and state item: its doubled
 * units are shared by the run's deliveries, and it keeps a busy endpoint at one table write
 * per delivery plus one per batch. It expects what is usual: the row still at attempt N-1,
 * our leases held, and, after a success, a closed circuit and the backlog mark as read (both
 * of which the success must report); a mark that came or went since the read costs one more
 * try. Anything else (a duplicate, a lost lease, a circuit to close, a conflicting
 * transaction) cancels it, and the same changes are made as the separate writes: nothing
 * recorded twice, nothing lost.
 */
export class DynamoAttemptLedger implements AttemptLedger {
  private readonly endpoints: DynamoEndpointGateStore;
  private readonly stats: DynamoEndpointStatsCounterStore;

  constructor(private readonly db: Dynamo) {
    this.endpoints = new DynamoEndpointGateStore(db);
    this.stats = new DynamoEndpointStatsCounterStore(db);
  }

  async finish(end: AttemptEnd): Promise<Finished> {
    const { delivery, update, change } = end;
    const key = end.leaseKey ?? delivery.id;
    const carried = end.carried ?? NOTHING;
    if (carried.attempts.length === 0 && carried.slots.length === 0) return this.finishApart(end, key, carried);
    // Counted on the state item's current bucket; begun first if the attempts are in a later one.
    const sums = statsSums([{ entry: update.entry, status: update.status }, ...carried.attempts]);
    const [sum] = sums;
    // Counts the state item cannot take in the transaction (two buckets, or an older one) go by the separate writes.
    if (sums.length > 1) return this.finishApart(end, key, carried);
    const ready = sum ? await this.endpoints.statsReady(end.endpoint, sum.start) : end.endpoint;
    if (sum && ready.stats?.bucket !== sum.start) return this.finishApart({ ...end, endpoint: ready }, key, carried);
    const stats = sum ?? null;
    // After a success the endpoint is expected closed, with the backlog mark as read; if the mark
    // came or went, one more try.
    let expect = change.succeeded ? (ready.backlog_at === undefined ? USUAL : MARKED) : undefined;
    for (let tries = 0; tries < 2; tries++) {
      const outcome = await this.tryTransaction({ ...end, endpoint: ready }, key, carried, expect, stats);
      if (outcome === 'done')
        return {
          recorded: true,
          released: { circuitBefore: change.succeeded ? 'closed' : ready.health.circuit, backlog: expect === MARKED },
        };
      if (outcome === 'duplicate' || outcome === 'cancelled') {
        if (outcome === 'cancelled') await this.logOnCancelled(delivery, update);
        const released = await this.endpoints.release(ready, key, end.token, change, carried);
        await this.endpoints.dropLeases(ready, carried.slots);
        return { recorded: false, released };
      }
      if (outcome === 'other') break;
      expect = outcome === 'marked' ? MARKED : USUAL;
    }
    return this.finishApart({ ...end, endpoint: ready }, key, carried);
  }

  /**
   * The single-item writes; the release counts the attempt only if the row's write recorded it (and
   * what runs carried).
   */
  private async finishApart(end: AttemptEnd, key: string, carried: Carried): Promise<Finished> {
    const { delivery, update, endpoint, token, change } = end;
    const recorded = await this.record(delivery, update);
    const counted = recorded ? [{ entry: update.entry, status: update.status }, ...carried.attempts] : carried.attempts;
    const released = await this.endpoints.release(endpoint, key, token, change, {
      attempts: counted,
      deliveries: carried.deliveries,
    });
    await this.endpoints.dropLeases(endpoint, carried.slots);
    return { recorded, released };
  }

  recordInRun(delivery: DeliveryRecord, update: AttemptUpdate): Promise<boolean> {
    return this.record(delivery, update);
  }

  /** The attempt on its open row; false when the row had moved on (then logged if it was cancelled meanwhile). */
  private async record(delivery: DeliveryRecord, update: AttemptUpdate): Promise<boolean> {
    try {
      await retryConflicts(() =>
        this.db.doc.update({
          TableName: this.db.tableName,
          ...recordAttemptInput(delivery, update),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      if (cancelledBefore(err.Item, update)) await this.logOnCancelled(delivery, update);
      return false;
    }
  }

  /**
   * The request went, though the row was cancelled while it was under way: its log shows it. Not counted as
   * recorded: what follows a recorded attempt (the next in order, the retry) is the cancel's to settle.
   */
  private async logOnCancelled(delivery: DeliveryRecord, update: AttemptUpdate): Promise<void> {
    // Best effort: the row's outcome stands without it, and the lease still has to go.
    await updateIf(this.db, logOnCancelledInput(delivery, update)).catch((err: unknown) =>
      logger.warn('Could not log an attempt on its cancelled delivery', { delivery_id: delivery.id, error: err }),
    );
  }

  async releaseCarried(endpoint: EndpointRecord, carried: Carried): Promise<void> {
    await this.stats.addQuietly(endpoint.shop_id, endpoint.id, carried.attempts);
    await this.endpoints.dropLeases(endpoint, carried.slots, carried.deliveries, carried.carriedUntil);
  }

  /**
   * One try: done, or why it was cancelled (the row had moved on; only the backlog mark differed,
   * there or not; anything else).
   */
  private async tryTransaction(
    end: AttemptEnd,
    key: string,
    carried: Carried,
    expect: Expectation | undefined,
    stats: BucketStats | null,
  ): Promise<'done' | 'duplicate' | 'cancelled' | 'marked' | 'unmarked' | 'other'> {
    const { delivery, update, endpoint, token, change } = end;
    const table = { TableName: this.db.tableName };
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Update: {
              ...table,
              ...recordAttemptInput(delivery, update),
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Update: {
              ...table,
              ...releaseInput(endpoint, key, token, change, {
                expect,
                slots: carried.slots,
                stats,
                carried: carried.deliveries,
              }),
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
      });
      return 'done';
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const [row, gate] = reasons;
      // Recorded already (by another consumer after our lease expired): only the lease is ours to end.
      if (row?.Code === 'ConditionalCheckFailed') return cancelledBefore(row.Item, update) ? 'cancelled' : 'duplicate';
      if (!expect || gate?.Code !== 'ConditionalCheckFailed' || !gate.Item) return 'other';
      // Marshalled: the document client leaves an error's item as the service sent it.
      const current = withState(endpoint, unmarshall(gate.Item));
      const ours = (slot: RunSlot) => current.leases[slot.key]?.token === slot.token;
      const usual =
        current.health.circuit === 'closed' &&
        ours({ key, token }) &&
        carried.slots.every(ours) &&
        current.stats?.bucket === (stats?.start ?? current.stats?.bucket);
      const mark = current.backlog_at === undefined ? 'unmarked' : 'marked';
      return usual && (mark === 'marked') !== (expect === MARKED) ? mark : 'other';
    }
  }
}

const NOTHING: Carried = { attempts: [], slots: [], deliveries: [] };

/** The row as a failed record found it (marshalled) was cancelled before this attempt was recorded. */
const cancelledBefore = (item: Record<string, AttributeValue> | undefined, update: AttemptUpdate): boolean =>
  item?.status?.S === 'cancelled' && item.attempts?.N === String(update.attempts - 1);

type Expectation = { condition: string; values: Record<string, unknown> };
const USUAL: Expectation = {
  condition: 'health.circuit = :closed AND attribute_not_exists(backlog_at)',
  values: { ':closed': 'closed' },
};
const MARKED: Expectation = {
  condition: 'health.circuit = :closed AND attribute_exists(backlog_at)',
  values: { ':closed': 'closed' },
};
