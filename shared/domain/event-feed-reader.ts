import { AppError } from '../errors';
import { FEED_RETENTION_MS, type EventFeedStore, type FeedDeps, type FeedEntry, type FeedPosition } from './event-feed';
import { EVENT_TYPES, type EventType } from './event-types';
import type { EventRecord } from './events';
import type { Scope } from './scopes';

/** A family of event types: the part of a type before its dot (`job` of `job.created`). */
export type EventFamily = EventType extends `${infer F}.${string}` ? F : never;

/** Who may read each family from the feed: the scope that reads its data (the last one is the one a refusal names). */
const FAMILY_SCOPES: Record<EventFamily, readonly Scope[]> = {
  call: ['calls:read'],
  job: ['jobs:read'],
  webhook_endpoint: ['webhooks:read', 'webhooks:write'],
};

export const familyOf = (type: string): string => type.slice(0, type.indexOf('.'));
const isFamily = (name: string): name is EventFamily => Object.hasOwn(FAMILY_SCOPES, name);

/** A `types` element: an event type, or a family with `.*`. */
export const isFeedTypeName = (name: string): boolean =>
  (EVENT_TYPES as readonly string[]).includes(name) || (name.endsWith('.*') && isFamily(name.slice(0, -2)));

/**
 * The types a feed request returns. Without `named`: every family the key may read, and a
 * 403 when it may read none. With it: the types named, and a 403 naming the missing scope
 * when the key may not read one of them.
 */
export function feedTypes(scopes: readonly Scope[], named?: readonly string[]): Set<EventType> {
  const allowed = (family: EventFamily) => FAMILY_SCOPES[family].some((s) => scopes.includes(s));
  const families = Object.keys(FAMILY_SCOPES) as EventFamily[];
  if (!named) {
    const types = EVENT_TYPES.filter((t) => allowed(familyOf(t) as EventFamily));
    if (types.length === 0) {
      const needed = families.map((f) => `'${FAMILY_SCOPES[f].at(-1)}'`).join(', ');
      throw new AppError('insufficient_scope', `The event feed needs one of the scopes ${needed}.`);
    }
    return new Set(types);
  }
  const types = new Set<EventType>();
  for (const name of named) {
    const family = (name.endsWith('.*') ? name.slice(0, -2) : familyOf(name)) as EventFamily;
    if (!allowed(family)) {
      throw new AppError(
        'insufficient_scope',
        `This API key lacks the '${FAMILY_SCOPES[family].at(-1)}' scope required to read ${name} events.`,
        { param: 'types' },
      );
    }
    for (const t of EVENT_TYPES) if (name.endsWith('.*') ? familyOf(t) === family : t === name) types.add(t);
  }
  return types;
}

export type FeedStart = { after: FeedPosition } | { since: Date } | 'oldest';

export interface FeedPage {
  events: EventRecord[];
  /** Where the next request starts (always set: at the end of the feed, where new events will appear). */
  next: FeedPosition;
  hasMore: boolean;
}

/** How far an appender's clock and its in-flight append may trail a reader's clock: the fan-out's timeout and more. */
export const APPEND_SKEW_MS = 5 * 60 * 1000;
/** Entries a request reads at most, whatever `types` leaves out of them. */
const MAX_EXAMINED = 1000;

const iso = (ms: number) => new Date(ms).toISOString();
const latest = (a: string, b: string) => (a > b ? a : b);

/** A start older than the retention: a cursor is 410 (entries after it may have expired), a `since` 400. */
function refuseExpired(start: FeedStart, retainedFrom: string): void {
  if (start !== 'oldest' && 'after' in start && start.after.at < retainedFrom) {
    throw new AppError(
      'cursor_expired',
      'This cursor is older than the feed keeps events (30 days); start again with `since`.',
      { param: 'cursor' },
    );
  }
  if (start !== 'oldest' && 'since' in start && start.since.toISOString() < retainedFrom) {
    throw new AppError('parameter_invalid', 'since must be within the last 30 days: the feed keeps events 30 days.', {
      param: 'since',
    });
  }
}

/** The place a request reads after, and the time before which it returns nothing. */
async function startPosition(
  feed: EventFeedStore,
  shopId: string,
  start: FeedStart,
  retainedFrom: string,
): Promise<FeedPosition> {
  if (start === 'oldest') return { seq: 0, at: retainedFrom };
  if ('after' in start) return start.after;
  const from = start.since.toISOString();
  return { seq: Math.max(1, await feed.firstSeqAround(shopId, from)) - 1, at: from };
}

type Chunk = Awaited<ReturnType<EventFeedStore['entries']>>;

/**
 * The first entries of a read from the oldest kept, and the place before them. Entries past the
 * retention that DynamoDB has not deleted yet are skipped through the hour marks, which are read
 * only when there are such entries.
 */
async function oldestKept(
  feed: EventFeedStore,
  shopId: string,
  floor: string,
): Promise<{ chunk: Chunk; after: number }> {
  const chunk = await feed.entries(shopId, 1, 100);
  const first = chunk.entries[0];
  if (!first || first.at >= floor) return { chunk, after: 0 };
  const marked = await feed.firstSeqAround(shopId, floor);
  if (marked <= first.seq) return { chunk, after: 0 };
  return { chunk: await feed.entries(shopId, marked, 100), after: marked - 1 };
}

/**
 * One page of a shop's feed, oldest first. At the end of the feed the next position moves to
 * just before anything that can still be appended, so a follower of a quiet shop keeps a
 * cursor that does not expire.
 */
export async function readFeed(
  { feed, now }: FeedDeps,
  shopId: string,
  request: { start: FeedStart; limit: number; types: ReadonlySet<string> },
): Promise<FeedPage> {
  const at = now().getTime();
  const retainedFrom = iso(at - FEED_RETENTION_MS);
  refuseExpired(request.start, retainedFrom);
  let position = await startPosition(feed, shopId, request.start, retainedFrom);
  const floor = latest(position.at, retainedFrom);
  let first: Chunk | undefined;
  if (request.start === 'oldest') ({ chunk: first, after: position.seq } = await oldestKept(feed, shopId, floor));
  const events: EventRecord[] = [];
  for (let examined = 0; examined < MAX_EXAMINED;) {
    const chunk = first ?? (await feed.entries(shopId, position.seq + 1, 100));
    first = undefined;
    const wanted: FeedEntry[] = [];
    let full = false;
    for (const [i, entry] of chunk.entries.entries()) {
      examined++;
      position = { seq: entry.seq, at: latest(entry.at, floor) };
      if (entry.at < floor || !request.types.has(entry.type)) continue;
      wanted.push(entry);
      if (events.length + wanted.length === request.limit) {
        full = true;
        chunk.more ||= i < chunk.entries.length - 1;
        break;
      }
    }
    const found = await feed.events(
      shopId,
      wanted.map((e) => e.eventId),
    );
    // An event past its retention may be gone before its entry.
    events.push(...wanted.flatMap((e) => found.get(e.eventId) ?? []));
    if (full) return { events, next: position, hasMore: chunk.more };
    if (!chunk.more) {
      return { events, next: { seq: position.seq, at: latest(position.at, iso(at - APPEND_SKEW_MS)) }, hasMore: false };
    }
  }
  return { events, next: position, hasMore: true };
}
