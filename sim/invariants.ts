import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import { localClient } from '../lib/local/dynamodb-local';
import { receives } from '../shared/delivery/fan-out';
import type { DeliveryRecord } from '../shared/delivery/records';
import { isOpenStatus } from '../shared/delivery/status';
import { CIRCUIT_OPEN } from '../shared/delivery/attempt-plan';
import { MAX_IN_FLIGHT } from '../shared/delivery/circuit';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from '../shared/delivery/policy';
import type { EventRecord } from '../shared/domain/events';
import type { EndpointRecord } from '../shared/domain/webhook-endpoints';
import { stripKeys } from '../shared/store/client';
import { eventFromItem } from '../shared/store/events';
import { shopPk } from '../shared/store/keys';
import type { ApiCall, SimApi } from './api';
import type { FaultRates } from './faults';
import type { Receipt } from './receivers';
import type { World } from './world';
import { checkFeed, feedEntriesOf, type FeedEntries } from './feed-check';

export interface Violation {
  rule: string;
  detail: string;
}

/** What the checks need of a run's records (./run.ts fills it). */
export interface Made {
  shopId: string;
  endpoints: { id: string; name: string; record: EndpointRecord }[];
  jobs: string[];
  events: string[];
  /** When the call that wrote each event answered (its write committed at or before that). */
  eventAnswered: Map<string, number>;
  /** Jobs approved, and when the approval answered (its job.approved event committed before). */
  approved: Map<string, number>;
}

export interface FinalState {
  events: EventRecord[];
  rows: DeliveryRecord[];
  open: number;
  endpoints: Map<string, EndpointRecord | null>;
  feed: FeedEntries;
  duplicates: number;
}

/** Reads the run's table past the gates: every event, every delivery row, every endpoint. */
export async function finalState(world: World, made: Made): Promise<FinalState> {
  const client = localClient(world.config.table.endpoint as string);
  const doc = DynamoDBDocument.from(client);
  const items: Record<string, unknown>[] = [];
  try {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.query({
        TableName: world.config.table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': shopPk(made.shopId) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      });
      items.push(...((page.Items ?? []) as Record<string, unknown>[]));
      start = page.LastEvaluatedKey;
    } while (start);
  } finally {
    client.destroy();
  }
  const rows = items.filter((i) => i.entity === 'delivery').map((i) => stripKeys<DeliveryRecord>(i));
  const events = items.filter((i) => i.entity === 'event').map((i) => eventFromItem(i));
  const endpoints = new Map<string, EndpointRecord | null>(made.endpoints.map((e) => [e.id, null]));
  for (const i of items)
    if (i.entity === 'webhook_endpoint' && endpoints.has(String(i.id)))
      endpoints.set(String(i.id), stripKeys<EndpointRecord>(i));
  const open = rows.filter((r) => isOpenStatus(r.status)).length;
  return { events, rows, open, endpoints, feed: feedEntriesOf(items), duplicates: 0 };
}

const is2xx = (s: number | null) => s !== null && s >= 200 && s < 300;

/** An endpoint's enable, disable and delete calls that took effect, and the engine's own disables. */
interface Change {
  start: number;
  end: number;
  enabled: boolean;
}

function changesOf(name: string, id: string, calls: ApiCall[], events: EventRecord[]): Change[] {
  const out: Change[] = [];
  for (const c of calls) {
    if (c.endpoint !== name || c.status >= 300) continue;
    if (c.operation === 'deleteWebhookEndpoint') out.push({ start: c.start, end: c.end, enabled: false });
    if (c.operation === 'updateWebhookEndpoint' && typeof c.request?.enabled === 'boolean')
      out.push({ start: c.start, end: c.end, enabled: c.request.enabled });
  }
  for (const e of events)
    if (e.type === 'webhook_endpoint.disabled' && e.data.id === id) {
      const at = Date.parse(e.timestamp);
      out.push({ start: at, end: at + 1_000, enabled: false });
    }
  return out.sort((a, b) => a.start - b.start);
}

/** Enabled over [from, to] for sure (true/false), or undefined when a change overlaps it. */
function enabledOver(changes: Change[], from: number, to: number): boolean | undefined {
  let enabled = true;
  for (const c of changes) {
    if (c.start <= to && c.end >= from) return undefined;
    if (c.end < from) enabled = c.enabled;
  }
  return enabled;
}

/**
 * The promises of docs/api.md, checked on a run's end state and everything its receivers got.
 * Each violation names its rule; an empty list is a run that kept every promise.
 */
export function checkRun(input: {
  world: World;
  made: Made;
  api: SimApi;
  state: FinalState;
  faults: FaultRates;
  failures: string[];
}): Violation[] {
  const { world, made, api, state } = input;
  const v: Violation[] = [];
  const add = (rule: string, detail: string) => v.push({ rule, detail });
  for (const f of input.failures) add('workload', f);
  for (const c of api.calls) if (c.status >= 500) add('api-5xx', `${c.operation} answered ${c.status}`);
  const receipts = world.receivers.receipts;

  const byPair = new Map<string, Receipt[]>();
  for (const r of receipts)
    byPair.set(`${r.endpoint}|${r.eventId}`, [...(byPair.get(`${r.endpoint}|${r.eventId}`) ?? []), r]);
  const rowsOf = (endpointId: string, eventId: string) =>
    state.rows.filter((r) => r.endpoint_id === endpointId && r.event_id === eventId);
  const redelivered = new Set(
    api.calls.filter((c) => c.operation === 'redeliverEvent' && c.status < 300).map((c) => String(c.params?.id ?? '')),
  );

  const nameOf = (endpointId: string) => made.endpoints.find((e) => e.id === endpointId)?.name;
  // Every row: ended after the drain, at most 8 attempts, none before its schedule, success only after a 2xx.
  for (const row of state.rows) {
    const name = `${row.endpoint_id}/${row.id}`;
    if (isOpenStatus(row.status)) add('lost', `${name} is still ${row.status} after the drain`);
    if (row.attempts > MAX_ATTEMPTS || row.history.length > MAX_ATTEMPTS)
      add('attempts', `${name} made ${row.attempts} attempts`);
    if (row.status === 'succeeded' && !is2xx(row.history.at(-1)?.status ?? null))
      add('success-without-2xx', `${name} succeeded with last attempt ${JSON.stringify(row.history.at(-1))}`);
    for (let i = 1; i < row.history.length; i++) {
      const prev = row.history[i - 1]!;
      const cur = row.history[i]!;
      const earliest = Date.parse(prev.at) + (RETRY_SCHEDULE_MS[prev.attempt - 1] ?? 0) - 1_000;
      // A probe that closes the circuit sends every retrying delivery at once (docs/api.md, the circuit).
      const closed = receipts.some(
        (r) =>
          r.endpoint === nameOf(row.endpoint_id) &&
          is2xx(r.status) &&
          r.answeredAt !== undefined &&
          r.answeredAt >= Date.parse(prev.at) &&
          r.answeredAt <= Date.parse(cur.at),
      );
      if (Date.parse(cur.at) < earliest && !closed)
        add('early-attempt', `${name} attempt ${cur.attempt} at ${cur.at}, before ${new Date(earliest).toISOString()}`);
    }
  }

  let duplicates = 0;
  for (const ep of made.endpoints) {
    const changes = changesOf(ep.name, ep.id, api.calls, state.events);
    const endRecord = state.endpoints.get(ep.id);
    const everGone = receipts.some((r) => r.endpoint === ep.name && r.status === 410);
    // Nothing lost: every event it was subscribed to (and matched) when the event was written.
    for (const event of state.events) {
      if (!receives(ep.record, event)) continue;
      const from = Date.parse(event.timestamp);
      const to = made.eventAnswered.get(event.id) ?? made.approved.get(String(event.data.id)) ?? from;
      const enabledThen = enabledOver(changes, from, to);
      // Created while it was disabled: recover's to send, never the fan-out's, however late the stream hands it on.
      if (enabledOver(changes, from, from) === false && rowsOf(ep.id, event.id).some((r) => r.origin === 'fanout'))
        add('fanned-out-while-disabled', `${event.type} ${event.id} got a fan-out row to ${ep.name}, disabled then`);
      if (enabledThen !== true) continue;
      const rows = rowsOf(ep.id, event.id);
      // A disable or delete before the fan-out read the endpoint ends the pair with no row (as a cancel would).
      const changedSince = changes.some((c) => c.end >= from);
      if (rows.length === 0) {
        if (!changedSince) add('lost', `${event.type} ${event.id} never reached ${ep.name} (no delivery row)`);
        continue;
      }
      const got = (byPair.get(`${ep.name}|${event.id}`) ?? []).some((r) => is2xx(r.status));
      if (!changedSince && endRecord?.enabled && !everGone) {
        if (!rows.some((r) => r.status === 'succeeded') || !got)
          add('lost', `${event.type} ${event.id} not delivered to ${ep.name}: ${rows.map((r) => r.status).join(',')}`);
      }
    }
    // Every attempt sent is in an attempt log (beyond the documented at-least-once windows, counted).
    for (const event of state.events) {
      const got = byPair.get(`${ep.name}|${event.id}`) ?? [];
      const sent = rowsOf(ep.id, event.id).reduce(
        (n, r) => n + r.history.filter((h) => h.error !== CIRCUIT_OPEN).length,
        0,
      );
      const oks = got.filter((r) => is2xx(r.status)).length;
      if (!redelivered.has(event.id) && oks > 1) duplicates += oks - 1;
      if (got.length > sent && noWindows(input.faults))
        add('unlogged-attempt', `${ep.name} got ${event.id} ${got.length} times, ${sent} attempts logged`);
    }
    // Nothing sent after a disable or delete committed (beyond what was in flight then).
    for (const r of receipts.filter((x) => x.endpoint === ep.name)) {
      const before = changes.filter((c) => c.start <= r.at);
      const last = before.at(-1);
      if (last && !last.enabled && last.end < r.at)
        add('sent-after-disable', `${ep.name} got ${r.type} ${r.eventId} at +${r.at - last.end} ms after its disable`);
    }
    if (world.receivers.maxInFlight(ep.name) > MAX_IN_FLIGHT)
      add('in-flight', `${ep.name} had ${world.receivers.maxInFlight(ep.name)} requests in flight`);
    checkRate(ep, api.calls, receipts, add);
    if (ep.record.ordering === 'per_resource') checkOrder(ep, state, receipts, add);
  }
  checkFeed(state.feed, state.events, add);
  state.duplicates = duplicates;
  return v;
}

const noWindows = (f: FaultRates) =>
  f.kill === 0 && f.tableAnswerLost === 0 && f.queueDuplicate === 0 && f.queueDeleteLost === 0 && f.streamTwice === 0;

function checkRate(
  ep: Made['endpoints'][number],
  calls: ApiCall[],
  receipts: Receipt[],
  add: (rule: string, detail: string) => void,
) {
  const limits = [
    ep.record.rate_limit ?? null,
    ...calls
      .filter(
        (c) =>
          c.endpoint === ep.name && c.operation === 'updateWebhookEndpoint' && c.request && 'rate_limit' in c.request,
      )
      .map((c) => (c.request?.rate_limit ?? null) as number | null),
  ];
  if (limits.includes(null)) return;
  const limit = Math.max(...(limits as number[]));
  const times = receipts.filter((r) => r.endpoint === ep.name).map((r) => r.at);
  for (let i = 0; i < times.length; i++) {
    const inWindow = times.filter((t) => t > times[i]! - 1_000 && t <= times[i]!).length;
    if (inWindow > limit) {
      add('rate-limit', `${ep.name} got ${inWindow} requests within a second (limit ${limit})`);
      return;
    }
  }
}

function checkOrder(
  ep: Made['endpoints'][number],
  state: FinalState,
  receipts: Receipt[],
  add: (rule: string, detail: string) => void,
) {
  const mine = receipts.filter((r) => r.endpoint === ep.name);
  const events = [...state.events].sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const r of mine) {
    const later = events.find((e) => e.id === r.eventId);
    if (!later) continue;
    for (const earlier of events) {
      if (earlier.id >= later.id || earlier.data.id !== later.data.id || !receives(ep.record, earlier)) continue;
      const rows = state.rows.filter((x) => x.endpoint_id === ep.id && x.event_id === earlier.id);
      if (rows.length === 0) continue;
      const deliveredBefore = mine.some((x) => x.eventId === earlier.id && is2xx(x.status) && x.seq < r.seq);
      const endedOtherwise = rows.every((x) => x.status === 'failed' || x.status === 'cancelled');
      if (!deliveredBefore && !endedOtherwise)
        add('order', `${ep.name} got ${later.type} ${later.id} before ${earlier.type} ${earlier.id} had ended`);
    }
  }
}
