import { appendToFeed, FEED_RETENTION_MS, type FeedPosition } from '../../shared/domain/event-feed';
import { feedTypes, readFeed, type FeedStart } from '../../shared/domain/event-feed-reader';
import { EVENT_TYPES } from '../../shared/domain/event-types';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import { createShop } from '../../shared/domain/shop';
import type { AppError } from '../../shared/errors';
import { DynamoEventFeed } from '../../shared/store/event-feed';
import { observeTable } from '../../shared/store/client';
import { putEvent } from '../../shared/store/events';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

const ALL = new Set<string>(EVENT_TYPES);

/** The feed's appends and reads on DynamoDB Local: concurrent appenders, retried batches, pages, positions. */
describe('the event feed (DynamoDB Local)', () => {
  let deps: ApiDeps;
  let feed: DynamoEventFeed;
  beforeAll(async () => {
    deps = await useFreshTable();
    feed = new DynamoEventFeed(deps.db);
  });

  /** `count` events of a new shop, written as the API writes them, with timestamps that go back and forth. */
  async function shopWithEvents(count: number): Promise<{ shopId: string; events: EventRecord[] }> {
    const shop = await createShop(deps, { name: 'Feed Shop', owner_email: 'o@feed.test' });
    const base = Date.now();
    const events = Array.from({ length: count }, (_, i) =>
      // Writers whose clocks differ by up to a second.
      newEvent(
        shop.id,
        i % 3 === 0 ? 'call.completed' : 'job.created',
        { id: `job_${i}` },
        new Date(base - (i % 4) * 300),
      ),
    );
    for (const event of events) await putEvent(deps.db, event);
    return { shopId: shop.id, events };
  }

  const feedDeps = (now = () => new Date()) => ({ feed, now });

  async function readAll(shopId: string, start: FeedStart, limit: number, types: ReadonlySet<string> = ALL) {
    const seen: EventRecord[] = [];
    let next: FeedPosition | undefined;
    for (let page = 0; page < 100; page++) {
      const got = await readFeed(feedDeps(), shopId, { start: next ? { after: next } : start, limit, types });
      seen.push(...got.events);
      next = got.next;
      if (!got.hasMore) return { seen, next };
    }
    throw new Error('the feed never ended');
  }

  it('appends each event once, in the order given, even when batches are retried and run side by side', async () => {
    const { shopId, events } = await shopWithEvents(30);
    // The same stream records handed over three times, twice at once (a retried batch beside a slow one).
    const failures = await Promise.all([
      appendToFeed(feedDeps(), events.slice(0, 20)),
      appendToFeed(feedDeps(), events.slice(0, 20)),
    ]);
    const last = await appendToFeed(feedDeps(), events);
    expect([...failures, last].map((f) => f.size)).toEqual([0, 0, 0]);

    const { seen } = await readAll(shopId, 'oldest', 7);
    expect(seen.map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(seen[0]).toEqual(events[0]);
    const entries = await feed.entriesSince(shopId, '');
    expect(entries.map((e) => e.seq - entries.at(-1)!.seq).reverse()).toEqual(events.map((_, i) => i));
    // The event as the API reads it carries none of the feed's bookkeeping.
    expect(await deps.events.get(shopId, events[4]!.id)).toEqual(events[4]);
  });

  it('starts a since time at the latest hour mark at or before it', async () => {
    const { shopId, events } = await shopWithEvents(6);
    const base = Date.now();
    const twoHoursOn = () => new Date(base + 2 * 3_600_000);
    await appendToFeed(feedDeps(), events.slice(0, 3));
    await appendToFeed(feedDeps(twoHoursOn), events.slice(3));
    const marked = await feed.firstSeqAround(shopId, twoHoursOn().toISOString());
    const entries = (await feed.entriesSince(shopId, '')).reverse();
    expect(marked).toBe(entries[3]!.seq);
    const since = (ms: number) => readAll(shopId, { since: new Date(base + ms) }, 100);
    expect((await since(3_600_000)).seen.map((e) => e.id)).toEqual(events.slice(3).map((e) => e.id));
    expect((await since(-60_000)).seen.map((e) => e.id)).toEqual(events.map((e) => e.id));
    // The end cursor sees what comes next, appended by a clock behind the entries before it.
    const end = await since(0);
    const more = newEvent(shopId, 'job.approved', { id: 'job_0' }, new Date());
    await putEvent(deps.db, more);
    await appendToFeed(feedDeps(), [more]);
    expect((await readAll(shopId, { after: end.next }, 100)).seen.map((e) => e.id)).toEqual([more.id]);
  });

  it('pages by types, starts at a time, and leaves a cursor at the end that sees what comes next', async () => {
    const { shopId, events } = await shopWithEvents(12);
    await appendToFeed(feedDeps(), events);

    const jobs = await readAll(shopId, 'oldest', 3, feedTypes(['jobs:read']));
    expect(jobs.seen.map((e) => e.id)).toEqual(events.filter((e) => e.type === 'job.created').map((e) => e.id));

    const since = new Date(Date.parse(events[0]!.timestamp) + 60_000);
    expect((await readAll(shopId, { since }, 100)).seen).toEqual([]);

    // Later events appear after the end cursor, and nothing before it comes again.
    const end = await readAll(shopId, 'oldest', 100);
    expect(end.seen).toHaveLength(12);
    const more = Array.from({ length: 3 }, (_, i) => newEvent(shopId, 'job.approved', { id: `job_${i}` }, new Date()));
    for (const event of more) await putEvent(deps.db, event);
    await appendToFeed(feedDeps(), more);
    expect((await readAll(shopId, { after: end.next }, 100)).seen.map((e) => e.id)).toEqual(more.map((e) => e.id));
  });

  it('reads from the oldest kept with one Query, past expired entries through the hour marks', async () => {
    const queries = () => {
      const seen: string[] = [];
      const stop = observeTable(deps.db, (operation) => void seen.push(operation));
      return { seen, stop };
    };
    const fresh = await shopWithEvents(2);
    await appendToFeed(feedDeps(), fresh.events);
    const read = queries();
    expect((await readAll(fresh.shopId, 'oldest', 100)).seen).toEqual(fresh.events);
    read.stop();
    expect(read.seen).toEqual(['Query', 'BatchGetItem']);

    // Entries a month old that DynamoDB has not deleted yet, in two hours, then today's.
    const { shopId } = await shopWithEvents(0);
    const at = (msAgo: number) => new Date(Date.now() - msAgo);
    const month = FEED_RETENTION_MS;
    const events = [at(month + 30 * 3_600_000), at(month + 30 * 3_600_000), at(month + 2 * 3_600_000), at(0)].map(
      (time, i) => newEvent(shopId, 'job.created', { id: `job_${i}` }, time),
    );
    for (const event of events) await putEvent(deps.db, event);
    for (const event of events)
      await appendToFeed(
        feedDeps(() => new Date(event.timestamp)),
        [event],
      );
    const expired = queries();
    expect((await readAll(shopId, 'oldest', 100)).seen.map((e) => e.id)).toEqual([events[3]!.id]);
    expired.stop();
    // The first entries, the hour marks, the entries from the latest mark before the retention.
    expect(expired.seen.slice(0, 3)).toEqual(['Query', 'Query', 'Query']);
    const entries = (await feed.entriesSince(shopId, '')).reverse();
    expect(await feed.firstSeqAround(shopId, at(month).toISOString())).toBe(entries[2]!.seq);
  });

  it('refuses a position older than the retention, and a since before it', async () => {
    const { shopId, events } = await shopWithEvents(2);
    await appendToFeed(feedDeps(), events);
    const { next } = await readAll(shopId, 'oldest', 100);
    const later = () => new Date(Date.now() + FEED_RETENTION_MS + 60_000);
    const read = (start: FeedStart) => readFeed(feedDeps(later), shopId, { start, limit: 10, types: ALL });
    await expect(read({ after: next })).rejects.toMatchObject({ code: 'cursor_expired' });
    await expect(read({ since: new Date() })).rejects.toMatchObject({
      code: 'parameter_invalid',
      options: { param: 'since' },
    });
    // The oldest start never expires; the feed shows only what is within the retention.
    expect((await read('oldest')).events).toEqual([]);
  });

  it('names the scope a key lacks for the types it asks for', () => {
    expect([...feedTypes(['calls:read'])]).toEqual(['call.completed']);
    expect(() => feedTypes(['calls:read'], ['job.*'])).toThrow(
      expect.objectContaining({
        code: 'insufficient_scope',
        message: expect.stringContaining("'jobs:read'"),
      }) as AppError,
    );
    expect([...feedTypes(['webhooks:read'], ['webhook_endpoint.*'])]).toEqual([
      'webhook_endpoint.disabled',
      'webhook_endpoint.test',
    ]);
    expect(() => feedTypes(['settings:read'])).toThrow(
      expect.objectContaining({ code: 'insufficient_scope' }) as AppError,
    );
  });
});
