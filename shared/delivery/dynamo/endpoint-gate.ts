import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { EndpointGateStore, RunSlot, Released, ReleaseChange, RunAttempt } from '../ports';
import { statsSums, type StatsSum } from '../endpoint-stats';
import type { EventRecord } from '../../domain/events';
import type { EndpointRecord } from '../../domain/webhook-endpoints';
import { carriedKey, MAX_IN_FLIGHT, type Admission, type EndpointHealth } from '../circuit';
import { eventItem } from '../../store/events';
import { cancellationReasons, isConditionFailed, retryConflicts, updateIf, type Dynamo } from '../../store/client';
import { counterAdds, readEndpoint, withState } from './endpoint-state';
import { DynamoEndpointStatsCounterStore } from './endpoint-stats';
import { keys } from '../../store/keys';

/** Attempts' counts for the state item's current bucket (`start`). */
export interface BucketStats {
  start: string;
  sum: StatsSum;
}

/**
 * What a batch's other runs leave to a release: the attempts they recorded on their rows alone, the
 * deliveries carried for them.
 */
export interface RunsCarried {
  attempts?: readonly RunAttempt[];
  deliveries?: readonly string[];
}

/** What an attempt's end writes on the endpoint's health and `failing_since`. */
function healthChange(change: ReleaseChange): {
  sets: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
  condition: string | null;
} {
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  let condition: string | null = null;
  if (change.succeeded) {
    values[':health'] = change.health;
    sets.push('health = :health');
  } else if (change.counted) {
    Object.assign(values, {
      ':one': 1,
      ':failedAt': change.health.last_failure_at,
      ':unanswered': change.health.unanswered === true,
    });
    sets.push(
      'health.consecutive_failures = health.consecutive_failures + :one',
      'health.last_failure_at = :failedAt',
      'health.unanswered = :unanswered',
    );
    // Failures are consecutive in the order the receiver answered, not the order they are written:
    // one that a later success overtook on its way to the table does not count.
    condition = 'NOT (health.last_success_at > :failedAt)';
    if (change.opens) {
      Object.assign(values, {
        ':open': 'open',
        ':probeAt': change.health.next_probe_at,
        ':interval': change.health.probe_interval_ms,
      });
      sets.push('health.circuit = :open', 'health.next_probe_at = :probeAt', 'health.probe_interval_ms = :interval');
    }
  }
  if (change.failingSince !== undefined) {
    values[':failingSince'] = change.failingSince;
    sets.push('failing_since = :failingSince');
  }
  return { sets, names: {}, values, condition };
}

/** What the write that ends an attempt also ends, counts and expects, besides our lease and the health. */
export interface ReleaseAlso {
  /**
   * More conditions: the attempt's transaction expects the endpoint as it usually is, and falls
   * back to this write alone, which reads back what it changed.
   */
  expect?: { condition: string; values: Record<string, unknown> };
  /** Other leases of ours (the slots of runs that ended before it), each ended only if still ours. */
  slots?: RunSlot[];
  /** Attempts' counts for the state item's current bucket. */
  stats?: BucketStats | null;
  /** Deliveries the admission wrote as carried for the runs. */
  carried?: readonly string[];
}

/**
 * The write that ends an attempt on its endpoint: drops our lease (only if it is still ours)
 * and writes the health. A success takes the backlog mark, so its holder goes on with the
 * endpoint's due deliveries.
 */
export function releaseInput(
  endpoint: EndpointRecord,
  leaseKey: string,
  token: string,
  change: ReleaseChange,
  { expect, slots = [], stats = null, carried = [] }: ReleaseAlso = {},
) {
  const health = healthChange(change);
  const { sets, values } = health;
  const names: Record<string, string> = { '#leases': 'leases', '#d': leaseKey, '#token': 'token' };
  const removes = ['#leases.#d', ...(change.succeeded ? ['backlog_at'] : [])];
  let condition =
    `attribute_exists(pk) AND #leases.#d.#token = ` + `:token${health.condition ? ` AND ${health.condition}` : ''}`;
  values[':token'] = token;
  slots.forEach((slot, i) => {
    names[`#c${i}`] = slot.key;
    values[`:c${i}`] = slot.token;
    removes.push(`#leases.#c${i}`);
    condition += ` AND #leases.#c${i}.#token = :c${i}`;
  });
  removes.push(...carriedNames(carried, names));
  if (expect) {
    condition += ` AND ${expect.condition}`;
    Object.assign(values, expect.values);
  }
  // The attempts' counts ride on this write, on the bucket the state item holds (the lease
  // condition makes a retried write count nothing).
  const counted = stats ? counterAdds(stats.sum) : null;
  if (stats && counted) {
    condition += ' AND stats_bucket = :statsBucket';
    Object.assign(values, counted.values, { ':statsBucket': stats.start });
  }
  return {
    Key: keys.endpointState(endpoint.shop_id, endpoint.id),
    UpdateExpression:
      `${sets.length ? `SET ${sets.join(', ')} ` : ''}REMOVE ` +
      `${removes.join(', ')}${counted ? ` ADD ${counted.adds.join(', ')}` : ''}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * What the delivery consumer writes on an endpoint (its gate): admissions, releases with the
 * health, the backlog mark, and the disable. Apart from the API's reads and writes of its
 * configuration (shared/store/webhook-endpoints.ts, which extends this class), so the consumer's bundle
 * carries only what it uses.
 */
export class DynamoEndpointGateStore implements EndpointGateStore {
  protected readonly stats: DynamoEndpointStatsCounterStore;

  constructor(protected readonly db: Dynamo) {
    this.stats = new DynamoEndpointStatsCounterStore(db);
  }

  /**
   * Configuration and state, in one strongly consistent round trip: the read the sweeper and the
   * recoveries make too.
   */
  get(shopId: string, id: string): Promise<EndpointRecord | null> {
    return readEndpoint(this.db, shopId, id);
  }

  async disable(
    endpoint: EndpointRecord,
    reason: 'failing' | 'gone',
    lastErrors: string[],
    event: EventRecord,
    at: string,
  ): Promise<boolean> {
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: this.db.tableName,
              Key: keys.webhookEndpoint(endpoint.shop_id, endpoint.id),
              UpdateExpression:
                'SET enabled = :false, disabled_reason = :reason, last_errors = :errors, updated_at = :at',
              ConditionExpression: 'enabled = :true',
              ExpressionAttributeValues: {
                ':false': false,
                ':true': true,
                ':reason': reason,
                ':errors': lastErrors,
                ':at': at,
              },
            },
          },
          // No admission once disabled: they are conditioned on the state's copy.
          {
            Update: {
              TableName: this.db.tableName,
              Key: keys.endpointState(endpoint.shop_id, endpoint.id),
              UpdateExpression: 'SET enabled = :false',
              ExpressionAttributeValues: { ':false': false },
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
      return true;
    } catch (err) {
      if (cancellationReasons(err)) return false;
      throw err;
    }
  }

  /**
   * Takes the admission's leases, drops the expired ones and writes the circuit, only if no
   * other consumer admitted since `endpoint` was read (lease_version) and it is still enabled.
   * Slots on a healthy endpoint and nothing else go by the count of leases instead
   * (`admitOnCount`), except under a rate limit: its starts, written whole, are only right on
   * the version they were counted on.
   */
  async admit(endpoint: EndpointRecord, admission: Admission): Promise<boolean> {
    // Every state item is made with its leases map and health (stateItem), so both writes below have their paths.
    if (isPlainSend(endpoint, admission)) return this.admitOnCount(endpoint, admission);
    const names: Record<string, string> = { '#leases': 'leases' };
    const values: Record<string, unknown> = {
      ':seen': endpoint.lease_version,
      ':next': endpoint.lease_version + 1,
      ':true': true,
    };
    const sets = ['lease_version = :next'];
    admission.send.forEach(({ deliveryId, lease }, i) => {
      names[`#d${i}`] = deliveryId;
      values[`:l${i}`] = lease;
      sets.push(`#leases.#d${i} = :l${i}`);
    });
    const removes = admission.expired
      .filter((id) => !admission.send.some((s) => s.deliveryId === id))
      .map((id, i) => ((names[`#x${i}`] = id), `#leases.#x${i}`));
    // An expired entry this admission carries anew is overwritten, not removed: one path may not be both.
    const renewed = new Set(admission.carry.map(carriedKey));
    removes.push(
      ...admission.expiredCarried
        .filter((key) => !renewed.has(key))
        .map((key, i) => ((names[`#y${i}`] = key), `#y${i}`)),
    );
    sets.push(...carrySets(admission, names, values));
    if (admission.health !== endpoint.health) {
      values[':health'] = admission.health;
      sets.push('health = :health');
    }
    if (admission.rateStarts) {
      values[':starts'] = admission.rateStarts;
      sets.push('rate_starts = :starts');
    }
    if (admission.rateTail) {
      values[':tail'] = admission.rateTail;
      sets.push('rate_tail = :tail');
    }
    const condition =
      'attribute_exists(pk) AND enabled = :true AND ' +
      (endpoint.lease_version === 0
        ? '(attribute_not_exists(lease_version) OR lease_version = :seen)'
        : 'lease_version = :seen');
    const update = `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`;
    return this.tryUpdate(endpoint, update, condition, names, values);
  }

  /**
   * New slots on a healthy endpoint, on the count of leases taken rather than on the version
   * read: batches that read the endpoint at the same moment all get a slot while there is
   * room, where the version made all but one of them read it again and retry (each loss one
   * more read and write of a busy endpoint item, and, after three, a trip back through the
   * queue). The cap holds all the same: DynamoDB applies the writes one at a time, and each
   * counts the leases the others added. The version still goes up, so an admission made on
   * the version (which may drop expired leases or change the circuit) sees this one. False
   * when the condition fails: the caller reads the endpoint again and decides afresh.
   */
  private async admitOnCount(endpoint: EndpointRecord, admission: Admission): Promise<boolean> {
    const names: Record<string, string> = {
      '#leases': 'leases',
      '#health': 'health',
      '#circuit': 'circuit',
      '#failures': 'consecutive_failures',
    };
    const values: Record<string, unknown> = {
      ':true': true,
      ':room': MAX_IN_FLIGHT - admission.send.length,
      ':closed': 'closed',
      ':zero': 0,
      ':one': 1,
    };
    const sets = ['lease_version = if_not_exists(lease_version, :zero) + :one'];
    const absent: string[] = [];
    admission.send.forEach(({ deliveryId, lease }, i) => {
      names[`#d${i}`] = deliveryId;
      values[`:l${i}`] = lease;
      sets.push(`#leases.#d${i} = :l${i}`);
      // Another batch holding the same delivery (a duplicate message, or its runs carry it) keeps it.
      names[`#e${i}`] = carriedKey(deliveryId);
      absent.push(`attribute_not_exists(#leases.#d${i})`, `attribute_not_exists(#e${i})`);
    });
    sets.push(...carrySets(admission, names, values));
    // …and what this batch's runs carry is no other batch's lease, nor carried by another.
    admission.carry.forEach(
      (id, i) => (
        (names[`#l${i}`] = id),
        absent.push(`attribute_not_exists(#leases.#l${i})`, `attribute_not_exists(#k${i})`)
      ),
    );
    const condition = [
      'attribute_exists(pk)',
      'enabled = :true',
      '(attribute_not_exists(#leases) OR size(#leases) <= :room)',
      '#health.#circuit = :closed',
      '#health.#failures = :zero',
      ...absent,
    ].join(' AND ');
    return this.tryUpdate(endpoint, `SET ${sets.join(', ')}`, condition, names, values);
  }

  /**
   * Drops the lease and writes the health; `attempts` (recorded by the caller's write just
   * before) are counted on the state item's current bucket by the same write. Only a write
   * that removes our lease counts them, so a retried release counts nothing twice. When the
   * lease is not ours any more, the health is written alone and the counts go to their
   * bucket's item, unless the lease is simply gone (then the write that removed it may have
   * been ours, its answer lost, and the counts with it).
   */
  async release(
    endpoint: EndpointRecord,
    deliveryId: string,
    token: string,
    change: ReleaseChange,
    { attempts = [], deliveries = [] }: RunsCarried = {},
  ): Promise<Released> {
    let current = endpoint;
    let adjusted = change;
    let sums = statsSums(attempts);
    for (let tries = 0; ; tries++) {
      const placed = await this.placeStats(current, sums);
      current = placed.endpoint;
      sums = placed.onItem ? [placed.onItem] : [];
      try {
        const input = {
          TableName: this.db.tableName,
          ...releaseInput(current, deliveryId, token, adjusted, { stats: placed.onItem, carried: deliveries }),
          ReturnValues: 'UPDATED_OLD' as const,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
        };
        const out = await retryConflicts(() => this.db.doc.update(input));
        const before = (out.Attributes?.health as EndpointHealth | undefined)?.circuit ?? current.health.circuit;
        return { circuitBefore: before, backlog: out.Attributes?.backlog_at !== undefined };
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
        // Marshalled: the document client leaves an error's item as the service sent it.
        if (!err.Item) return { circuitBefore: null, backlog: false }; // the endpoint is gone
        current = withState(current, unmarshall(err.Item));
      }
      // What differed: a success overtook this failure (it is not counted), the stats bucket moved
      // on, or our lease expired and was taken again.
      const failedAt = change.health.last_failure_at;
      const overtaken =
        !change.succeeded && change.counted && failedAt !== null && (current.health.last_success_at ?? '') > failedAt;
      if (overtaken) adjusted = { ...change, counted: false, opens: false, failingSince: undefined };
      const lease = current.leases[deliveryId];
      if (lease?.token === token && tries < 3) continue;
      if (lease)
        for (const { start, sum } of sums) await this.stats.addSumQuietly(current.shop_id, current.id, start, sum);
      break;
    }
    // Not ours any more: write the health alone.
    const { sets, names, values, condition } = healthChange(adjusted);
    if (sets.length === 0) return { circuitBefore: null, backlog: false };
    const ok = await this.tryUpdate(
      current,
      `SET ${sets.join(', ')}`,
      `attribute_exists(pk)${condition ? ` AND ${condition}` : ''}`,
      names,
      values,
    );
    return { circuitBefore: ok ? current.health.circuit : null, backlog: false };
  }

  /**
   * The endpoint with its state item's stats bucket at `start` or later: begun there (`roll`)
   * when the bucket it holds is earlier; when another consumer's write came first, the state
   * item read again (a read costs a fraction of the write a count apart would).
   */
  async statsReady(endpoint: EndpointRecord, start: string): Promise<EndpointRecord> {
    let current = endpoint;
    for (let tries = 0; tries < 3; tries++) {
      const bucket = current.stats?.bucket ?? null;
      if (!current.stats || (bucket !== null && bucket >= start)) return current;
      if (await this.stats.roll(current, start))
        return {
          ...current,
          stats: { bucket: start, attempts: 0, succeeded: 0, failed: 0, deliveries_failed: 0, latency: {} },
        };
      const state = await this.db.doc.get({
        TableName: this.db.tableName,
        Key: keys.endpointState(current.shop_id, current.id),
        ConsistentRead: true,
      });
      if (!state.Item) return current;
      current = withState(current, state.Item);
    }
    return current;
  }

  /**
   * Where attempts' counts go: the bucket the state item holds takes its own (begun first
   * when theirs is later: `roll`); counts of other buckets (an attempt at a bucket's edge, or
   * a roll lost to another consumer) are added to their bucket's items at once. Returns the
   * endpoint as it now is and what the next write on the state item is to count.
   */
  async placeStats(
    endpoint: EndpointRecord,
    sums: readonly BucketStats[],
  ): Promise<{ endpoint: EndpointRecord; onItem: BucketStats | null }> {
    if (sums.length === 0) return { endpoint, onItem: null };
    const newest = sums.reduce((a, b) => (b.start > a.start ? b : a));
    const current = await this.statsReady(endpoint, newest.start);
    const onItem = sums.find((s) => s.start === current.stats?.bucket) ?? null;
    for (const { start, sum } of sums)
      if (start !== onItem?.start) await this.stats.addSumQuietly(current.shop_id, current.id, start, sum);
    return { endpoint: current, onItem };
  }

  /** Ends leases of ours with no health to write (the slots runs kept), each only if it is still ours. */
  async dropLeases(
    endpoint: EndpointRecord,
    slots: RunSlot[],
    carried: readonly string[] = [],
    carriedUntil = 0,
  ): Promise<void> {
    for (const slot of slots) {
      await this.tryUpdate(
        endpoint,
        'REMOVE #leases.#d',
        'attribute_exists(pk) AND #leases.#d.#token = :token',
        { '#leases': 'leases', '#d': slot.key, '#token': 'token' },
        { ':token': slot.token },
      );
    }
    if (carried.length === 0) return;
    // Each only while it is still ours (the time our admission wrote): one that expired may have
    // been carried anew by another batch.
    const names = {};
    const paths = carriedNames(carried, names);
    await this.tryUpdate(
      endpoint,
      `REMOVE ${paths.join(', ')}`,
      ['attribute_exists(pk)', ...paths.map((p) => `(attribute_not_exists(${p}) OR ${p} = :until)`)].join(' AND '),
      names,
      { ':until': carriedUntil },
    );
  }

  async markBacklog(endpoint: EndpointRecord, at: string): Promise<void> {
    await this.tryUpdate(endpoint, 'SET backlog_at = :at', 'attribute_exists(pk)', {}, { ':at': at });
  }

  private async tryUpdate(
    endpoint: EndpointRecord,
    update: string,
    condition: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const usedNames = Object.fromEntries(
      Object.entries(names).filter(([k]) => update.includes(k) || condition.includes(k)),
    );
    return updateIf(this.db, {
      Key: keys.endpointState(endpoint.shop_id, endpoint.id),
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeNames: Object.keys(usedNames).length ? usedNames : undefined,
      ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
    });
  }
}

/**
 * Slots on a healthy endpoint and nothing else: no probe, no circuit change, no expired lease to
 * drop (those go by the version).
 */
function isPlainSend(endpoint: EndpointRecord, admission: Admission): boolean {
  const { health } = endpoint;
  return (
    admission.send.length > 0 &&
    !admission.rateStarts &&
    !admission.rateTail &&
    admission.expired.length === 0 &&
    admission.expiredCarried.length === 0 &&
    admission.health === health &&
    health.circuit === 'closed' &&
    health.consecutive_failures === 0 &&
    admission.send.every((s) => !s.lease.probe)
  );
}

/** The admission's carried deliveries as `SET` clauses: each a top-level attribute (`carriedKey`), until when. */
function carrySets(admission: Admission, names: Record<string, string>, values: Record<string, unknown>): string[] {
  if (admission.carry.length === 0) return [];
  values[':carry'] = admission.carryUntil;
  return admission.carry.map((id, i) => ((names[`#k${i}`] = carriedKey(id)), `#k${i} = :carry`));
}

/** The carried deliveries' attributes as `REMOVE` paths. */
const carriedNames = (ids: readonly string[], names: Record<string, string>): string[] =>
  ids.map((id, i) => ((names[`#h${i}`] = carriedKey(id)), `#h${i}`));
