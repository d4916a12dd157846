import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { EndpointGateStore, HeldSlot, Released, ReleaseChange } from '../delivery-ports';
import type { EventFilter } from '../../domain/event-filter-schema';
import type { EventRecord } from '../../domain/events';
import type { EndpointRecord } from '../../domain/webhook-endpoints';
import { HEALTHY, MAX_IN_FLIGHT, type Admission, type EndpointHealth } from '../circuit';
import { eventItem } from '../../store/events';
import { cancellationReasons, isConditionFailed, retryConflicts, stripKeys, updateIf, type Dynamo } from '../../store/client';
import { keys } from '../../store/keys';

/** The endpoint of a table item; endpoints saved before the circuit existed read as healthy, before filters as unfiltered. */
export function endpointFromItem(item: Record<string, unknown>): EndpointRecord {
  const { filter, ...record } = stripKeys<Omit<EndpointRecord, 'filter'> & { filter?: string | null }>(item);
  return {
    ...record,
    filter: typeof filter === 'string' ? (JSON.parse(filter) as EventFilter) : null,
    health: { ...HEALTHY, ...record.health },
    leases: record.leases ?? {},
    lease_version: record.lease_version ?? 0,
  };
}

/** What an attempt's end writes on the endpoint's health and `failing_since`. */
function healthChange(change: ReleaseChange): { sets: string[]; names: Record<string, string>; values: Record<string, unknown>; condition: string | null } {
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  let condition: string | null = null;
  if (change.succeeded) {
    values[':health'] = change.health;
    sets.push('health = :health');
  } else if (change.counted) {
    Object.assign(values, { ':one': 1, ':failedAt': change.health.last_failure_at, ':unanswered': change.health.unanswered === true });
    sets.push('health.consecutive_failures = health.consecutive_failures + :one', 'health.last_failure_at = :failedAt', 'health.unanswered = :unanswered');
    // Failures are consecutive in the order the receiver answered, not the order they are written:
    // one that a later success overtook on its way to the table does not count.
    condition = 'NOT (health.last_success_at > :failedAt)';
    if (change.opens) {
      Object.assign(values, { ':open': 'open', ':probeAt': change.health.next_probe_at, ':interval': change.health.probe_interval_ms });
      sets.push('health.circuit = :open', 'health.next_probe_at = :probeAt', 'health.probe_interval_ms = :interval');
    }
  }
  if (change.failingSince !== undefined) {
    values[':failingSince'] = change.failingSince;
    sets.push('failing_since = :failingSince');
  }
  return { sets, names: {}, values, condition };
}

/**
 * The write that ends an attempt on its endpoint: drops our lease (only if it is still ours)
 * and writes the health. A success takes the backlog mark, so its holder goes on with the
 * endpoint's due deliveries. `slots` are other leases of ours this write also ends (the
 * slots of runs that ended before it), each only if still ours. `expect` adds conditions (the
 * attempt's transaction expects the endpoint as it usually is, and falls back to this write
 * alone, which reads back what it changed).
 */
export function releaseInput(endpoint: EndpointRecord, leaseKey: string, token: string, change: ReleaseChange, expect?: { condition: string; values: Record<string, unknown> }, slots: HeldSlot[] = []) {
  const health = healthChange(change);
  const { sets, values } = health;
  const names: Record<string, string> = { '#leases': 'leases', '#d': leaseKey, '#token': 'token' };
  const removes = ['#leases.#d', ...(change.succeeded ? ['backlog_at'] : [])];
  let condition = `attribute_exists(pk) AND #leases.#d.#token = :token${health.condition ? ` AND ${health.condition}` : ''}`;
  values[':token'] = token;
  slots.forEach((slot, i) => {
    names[`#c${i}`] = slot.key;
    values[`:c${i}`] = slot.token;
    removes.push(`#leases.#c${i}`);
    condition += ` AND #leases.#c${i}.#token = :c${i}`;
  });
  if (expect) {
    condition += ` AND ${expect.condition}`;
    Object.assign(values, expect.values);
  }
  return {
    Key: keys.webhookEndpoint(endpoint.shop_id, endpoint.id),
    UpdateExpression: `${sets.length ? `SET ${sets.join(', ')} ` : ''}REMOVE ${removes.join(', ')}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * What the delivery consumer writes on an endpoint (its gate): admissions, releases with the
 * health, the backlog mark, and the disable. Apart from the API's reads and writes of its
 * configuration (./webhook-endpoints.ts, which extends this class), so the consumer's bundle
 * carries only what it uses.
 */
export class DynamoEndpointGateStore implements EndpointGateStore {
  constructor(protected readonly db: Dynamo) {}

  async get(shopId: string, id: string): Promise<EndpointRecord | null> {
    const out = await this.db.doc.get({ TableName: this.db.tableName, Key: keys.webhookEndpoint(shopId, id), ConsistentRead: true });
    return out.Item ? endpointFromItem(out.Item) : null;
  }

  async disable(endpoint: EndpointRecord, reason: 'failing' | 'gone', lastErrors: string[], event: EventRecord, at: string): Promise<boolean> {
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: this.db.tableName,
              Key: keys.webhookEndpoint(endpoint.shop_id, endpoint.id),
              UpdateExpression: 'SET enabled = :false, disabled_reason = :reason, last_errors = :errors, updated_at = :at',
              ConditionExpression: 'enabled = :true',
              ExpressionAttributeValues: { ':false': false, ':true': true, ':reason': reason, ':errors': lastErrors, ':at': at },
            },
          },
          { Put: { TableName: this.db.tableName, Item: eventItem(event), ConditionExpression: 'attribute_not_exists(pk)' } },
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
    if (isPlainSend(endpoint, admission)) {
      try {
        return await this.admitOnCount(endpoint, admission);
      } catch (err) {
        // An item saved before the circuit existed: the version's way below sets its leases up.
        if (!isDocumentPathError(err)) throw err;
      }
    }
    const names: Record<string, string> = { '#leases': 'leases' };
    const values: Record<string, unknown> = { ':seen': endpoint.lease_version, ':next': endpoint.lease_version + 1, ':true': true };
    const sets = ['lease_version = :next'];
    admission.send.forEach(({ deliveryId, lease }, i) => {
      names[`#d${i}`] = deliveryId;
      values[`:l${i}`] = lease;
      sets.push(`#leases.#d${i} = :l${i}`);
    });
    const removes = admission.expired.filter((id) => !admission.send.some((s) => s.deliveryId === id)).map((id, i) => ((names[`#x${i}`] = id), `#leases.#x${i}`));
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
    const condition = 'attribute_exists(pk) AND enabled = :true AND ' + (endpoint.lease_version === 0 ? '(attribute_not_exists(lease_version) OR lease_version = :seen)' : 'lease_version = :seen');
    const update = `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`;
    try {
      return await this.tryUpdate(endpoint, update, condition, names, values);
    } catch (err) {
      // An item saved before the circuit existed has no leases map to write into yet.
      if (!isDocumentPathError(err)) throw err;
      await this.tryUpdate(endpoint, 'SET #leases = if_not_exists(#leases, :empty), health = if_not_exists(health, :healthy)', 'attribute_exists(pk)', { '#leases': 'leases' }, { ':empty': {}, ':healthy': HEALTHY });
      return this.tryUpdate(endpoint, update, condition, names, values);
    }
  }

  /**
   * New slots on a healthy endpoint, on the count of leases held rather than on the version
   * read: batches that read the endpoint at the same moment all get a slot while there is
   * room, where the version made all but one of them read it again and retry (each loss one
   * more read and write of a busy endpoint item, and, after three, a trip back through the
   * queue). The cap holds all the same: DynamoDB applies the writes one at a time, and each
   * counts the leases the others added. The version still goes up, so an admission made on
   * the version (which may drop expired leases or change the circuit) sees this one. False
   * when the condition fails: the caller reads the endpoint again and decides afresh.
   */
  private async admitOnCount(endpoint: EndpointRecord, admission: Admission): Promise<boolean> {
    const names: Record<string, string> = { '#leases': 'leases', '#health': 'health', '#circuit': 'circuit', '#failures': 'consecutive_failures' };
    const values: Record<string, unknown> = { ':true': true, ':room': MAX_IN_FLIGHT - admission.send.length, ':closed': 'closed', ':zero': 0, ':one': 1 };
    const sets = ['lease_version = if_not_exists(lease_version, :zero) + :one'];
    const absent: string[] = [];
    admission.send.forEach(({ deliveryId, lease }, i) => {
      names[`#d${i}`] = deliveryId;
      values[`:l${i}`] = lease;
      sets.push(`#leases.#d${i} = :l${i}`);
      // Another batch holding the same delivery (a duplicate message) keeps it.
      absent.push(`attribute_not_exists(#leases.#d${i})`);
    });
    const condition = ['attribute_exists(pk)', 'enabled = :true', '(attribute_not_exists(#leases) OR size(#leases) <= :room)', '#health.#circuit = :closed', '#health.#failures = :zero', ...absent].join(' AND ');
    return this.tryUpdate(endpoint, `SET ${sets.join(', ')}`, condition, names, values);
  }

  async release(endpoint: EndpointRecord, deliveryId: string, token: string, change: ReleaseChange, tries = 0): Promise<Released> {
    let current: EndpointRecord;
    try {
      const input = { TableName: this.db.tableName, ...releaseInput(endpoint, deliveryId, token, change), ReturnValues: 'UPDATED_OLD' as const, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
      const out = await retryConflicts(() => this.db.doc.update(input));
      const before = (out.Attributes?.health as EndpointHealth | undefined)?.circuit ?? endpoint.health.circuit;
      return { circuitBefore: before, backlog: out.Attributes?.backlog_at !== undefined };
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      // Marshalled: the document client leaves an error's item as the service sent it.
      if (!err.Item) return { circuitBefore: null, backlog: false }; // the endpoint is gone
      current = endpointFromItem(unmarshall(err.Item));
    }
    // What differed: a success overtook this failure (it is not counted), or our lease expired and was taken again.
    const failedAt = change.health.last_failure_at;
    const overtaken = !change.succeeded && change.counted && failedAt !== null && (current.health.last_success_at ?? '') > failedAt;
    const adjusted: ReleaseChange = overtaken ? { ...change, counted: false, opens: false, failingSince: undefined } : { ...change };
    if (current.leases[deliveryId]?.token === token && tries < 3) return this.release(current, deliveryId, token, adjusted, tries + 1);
    // Not ours any more: write the health alone.
    const { sets, names, values, condition } = healthChange(adjusted);
    if (sets.length === 0) return { circuitBefore: null, backlog: false };
    const ok = await this.tryUpdate(endpoint, `SET ${sets.join(', ')}`, `attribute_exists(pk)${condition ? ` AND ${condition}` : ''}`, names, values);
    return { circuitBefore: ok ? current.health.circuit : null, backlog: false };
  }

  /** Ends leases of ours with no health to write (the slots runs held), each only if it is still ours. */
  async dropLeases(endpoint: EndpointRecord, slots: HeldSlot[]): Promise<void> {
    for (const slot of slots) {
      await this.tryUpdate(endpoint, 'REMOVE #leases.#d', 'attribute_exists(pk) AND #leases.#d.#token = :token', { '#leases': 'leases', '#d': slot.key, '#token': 'token' }, { ':token': slot.token });
    }
  }

  async markBacklog(endpoint: EndpointRecord, at: string): Promise<void> {
    await this.tryUpdate(endpoint, 'SET backlog_at = :at', 'attribute_exists(pk)', {}, { ':at': at });
  }

  private async tryUpdate(endpoint: EndpointRecord, update: string, condition: string, names: Record<string, string>, values: Record<string, unknown>): Promise<boolean> {
    const usedNames = Object.fromEntries(Object.entries(names).filter(([k]) => update.includes(k) || condition.includes(k)));
    return updateIf(this.db, {
      Key: keys.webhookEndpoint(endpoint.shop_id, endpoint.id),
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeNames: Object.keys(usedNames).length ? usedNames : undefined,
      ExpressionAttributeValues: values,
    });
  }
}

/** Slots on a healthy endpoint and nothing else: no probe, no circuit change, no expired lease to drop (those go by the version). */
function isPlainSend(endpoint: EndpointRecord, admission: Admission): boolean {
  const { health } = endpoint;
  return (
    admission.send.length > 0 &&
    !admission.rateStarts &&
    !admission.rateTail &&
    admission.expired.length === 0 &&
    admission.health === health &&
    health.circuit === 'closed' &&
    health.consecutive_failures === 0 &&
    admission.send.every((s) => !s.lease.probe)
  );
}

/** DynamoDB's answer to a write into a map the item does not have yet. */
const isDocumentPathError = (err: unknown): boolean => err instanceof Error && err.name === 'ValidationException' && /document path/i.test(err.message);
