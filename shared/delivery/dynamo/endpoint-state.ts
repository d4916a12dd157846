import { bucketStart, type StatsSum } from '../endpoint-stats';
import type { EventFilter } from '../../domain/event-filter-schema';
import type { EndpointRecord, EndpointStatsState } from '../../domain/webhook-endpoints';
import { HEALTHY } from '../circuit';
import { batchGet, stripKeys, type Dynamo } from '../../store/client';
import * as keys from '../../store/item-keys';

/**
 * An endpoint is two items: its configuration (`WE#<id>`: URL, secrets, filter, events: what
 * the API changes) and its state (`WE#<id>#STATE`: what every delivery changes: leases, health,
 * `failing_since`, the backlog mark, the rate window, what batches' runs carry and the current
 * stats bucket's counters). The state item stays small (under 1 KB with four leases and one
 * batch's carried deliveries, about 20 bytes each; several batches carrying at once can take it
 * past, 2 write units then), so an admission or release costs the same whatever the
 * configuration's size. `enabled` is on both: the
 * configuration is what the API shows, the state's copy is what admissions are conditioned
 * on; both are written in one transaction. Readers join the two into one EndpointRecord.
 */

export const STATE_ENTITY = 'endpoint_state';

/**
 * The fields the state item holds: never written on the configuration item (`configItem`), replaced
 * whole by each read of the state.
 */
const STATE_FIELDS = [
  'health',
  'failing_since',
  'leases',
  'lease_version',
  'backlog_at',
  'rate_starts',
  'rate_tail',
  'carried',
  'stats',
] as const;

/** The stats counters, top-level attributes so `ADD` works; the latency histogram as `s_l<bucket>`. */
export const COUNTER = {
  attempts: 's_attempts',
  succeeded: 's_succeeded',
  failed: 's_failed',
  deliveries_failed: 's_deliveries_failed',
} as const;
export const latencyCounter = (bucket: number | string) => `s_l${bucket}`;

/** The configuration item as a record (without state): its filter is stored as JSON text, null when it has none. */
function configFromItem(item: Record<string, unknown>): EndpointRecord {
  const { filter, ...record } = stripKeys<Omit<EndpointRecord, 'filter'> & { filter: string | null }>(item);
  return {
    ...record,
    filter: typeof filter === 'string' ? (JSON.parse(filter) as EventFilter) : null,
    health: { ...HEALTHY },
    leases: {},
    lease_version: 0,
  };
}

/**
 * The deliveries batches' runs carry (`c_…` attributes, shared/delivery/circuit.ts `carriedKey`),
 * when there are any.
 */
function carriedOf(item: Record<string, unknown>): { carried?: Record<string, number> } {
  const entries = Object.entries(item).filter(([name, until]) => name.startsWith('c_') && typeof until === 'number');
  return entries.length > 0 ? { carried: Object.fromEntries(entries) as Record<string, number> } : {};
}

/** Counters of the state item's current bucket. */
export function statsOf(item: Record<string, unknown>): EndpointStatsState {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const latency: Record<number, number> = {};
  for (const [name, value] of Object.entries(item)) {
    const m = /^s_l(\d+)$/.exec(name);
    if (m) latency[Number(m[1])] = n(value);
  }
  const bucket = typeof item.stats_bucket === 'string' ? item.stats_bucket : null;
  return {
    bucket,
    attempts: n(item[COUNTER.attempts]),
    succeeded: n(item[COUNTER.succeeded]),
    failed: n(item[COUNTER.failed]),
    deliveries_failed: n(item[COUNTER.deliveries_failed]),
    latency,
  };
}

/**
 * The endpoint as the two items say: the configuration, and the state over it. Both are made
 * and deleted in one transaction, but a batch read or a query may see one without the other
 * (an endpoint being created or deleted): with no state item, the endpoint's health and
 * `failing_since` are the record's, and no lease is held. Every write on the state item is
 * conditioned on its existence, so such a read admits nothing.
 */
export function withState(config: EndpointRecord, state: Record<string, unknown> | undefined): EndpointRecord {
  const record: Record<string, unknown> = { ...config };
  for (const field of STATE_FIELDS) if (field !== 'health' && field !== 'failing_since') delete record[field];
  const base = { ...(record as unknown as EndpointRecord), leases: {}, lease_version: 0 };
  if (!state) return base;
  const s = state as Partial<EndpointRecord>;
  return {
    ...base,
    health: s.health ? { ...HEALTHY, ...s.health } : config.health,
    failing_since: s.failing_since !== undefined ? s.failing_since : config.failing_since,
    leases: s.leases ?? {},
    lease_version: s.lease_version ?? 0,
    ...(s.backlog_at !== undefined ? { backlog_at: s.backlog_at } : {}),
    ...(s.rate_starts !== undefined ? { rate_starts: s.rate_starts } : {}),
    ...(s.rate_tail !== undefined ? { rate_tail: s.rate_tail } : {}),
    ...carriedOf(state),
    stats: statsOf(state),
  };
}

/** The endpoint of its configuration item and state item (absent: see `withState`). */
export const endpointFromItems = (
  config: Record<string, unknown>,
  state: Record<string, unknown> | undefined,
): EndpointRecord => withState(configFromItem(config), state);

/** The configuration item of a record: everything but the state. */
export function configItem(endpoint: EndpointRecord, filter: string | null): Record<string, unknown> {
  const item: Record<string, unknown> = {
    ...keys.webhookEndpoint(endpoint.shop_id, endpoint.id),
    entity: 'webhook_endpoint',
    ...endpoint,
    filter,
  };
  for (const field of STATE_FIELDS) delete item[field];
  return item;
}

/** A new state item: the endpoint's health and `failing_since`, no lease, a stats bucket begun at `at`. */
export function stateItem(endpoint: EndpointRecord, at: Date): Record<string, unknown> {
  return {
    ...keys.endpointState(endpoint.shop_id, endpoint.id),
    entity: STATE_ENTITY,
    enabled: endpoint.enabled,
    health: endpoint.health,
    failing_since: endpoint.failing_since,
    leases: {},
    lease_version: 0,
    stats_bucket: bucketStart(at),
    ...Object.fromEntries(Object.values(COUNTER).map((name) => [name, 0])),
  };
}

/** The `ADD` clauses (and their values) that count a sum on the state item's current bucket. */
export function counterAdds(sum: StatsSum, prefix = ':s'): { adds: string[]; values: Record<string, number> } {
  const adds: string[] = [];
  const values: Record<string, number> = {};
  for (const [field, name] of Object.entries(COUNTER)) {
    adds.push(`${name} ${prefix}${field}`);
    values[`${prefix}${field}`] = sum[field as keyof typeof COUNTER];
  }
  for (const [bucket, count] of Object.entries(sum.latency)) {
    adds.push(`${latencyCounter(bucket)} ${prefix}l${bucket}`);
    values[`${prefix}l${bucket}`] = count;
  }
  return { adds, values };
}

/**
 * Several endpoints (configuration and state) by shop and id, in one round trip; keyed
 * `<shop>/<endpoint>`. The sweeper's and the recoveries' read, apart from the stores so their
 * bundles carry none of the stores' writes.
 */
export async function readEndpoints(
  db: Dynamo,
  refs: { shop_id: string; endpoint_id: string }[],
): Promise<Map<string, EndpointRecord>> {
  const wanted = new Map(
    refs.map((r) => [
      `${r.shop_id}/${r.endpoint_id}`,
      [keys.webhookEndpoint(r.shop_id, r.endpoint_id), keys.endpointState(r.shop_id, r.endpoint_id)] as const,
    ]),
  );
  const found = await batchGet(db, [...wanted.values()].flat());
  const out = new Map<string, EndpointRecord>();
  for (const [ref, [config, state]] of wanted) {
    const item = found.get(`${config.pk}|${config.sk}`);
    if (item) out.set(ref, endpointFromItems(item, found.get(`${state.pk}|${state.sk}`)));
  }
  return out;
}

/** One endpoint (configuration and state), or null. */
export async function readEndpoint(db: Dynamo, shopId: string, id: string): Promise<EndpointRecord | null> {
  return (await readEndpoints(db, [{ shop_id: shopId, endpoint_id: id }])).get(`${shopId}/${id}`) ?? null;
}
