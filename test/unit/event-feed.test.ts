import {
  appendToFeed,
  LastEntries,
  successor,
  type EventFeedStore,
  type FeedEntry,
} from '../../shared/domain/event-feed';
import { newEvent, type EventRecord } from '../../shared/domain/events';

const T = Date.parse('2026-11-28T12:00:00.000Z');
const event = (shop: string, n: number, skewMs = 0): EventRecord =>
  newEvent(shop, 'job.created', { id: `job_${n}` }, new Date(T + skewMs));

/** A feed in memory whose appends can be made to fail for chosen events. */
function memoryFeed(failFor: Set<string> = new Set()) {
  const feeds = new Map<string, FeedEntry[]>();
  const hours: [string, number][] = [];
  const of = (shopId: string) => feeds.get(shopId) ?? [];
  const reads = { last: 0 };
  const store: EventFeedStore = {
    last: async (shopId) => {
      reads.last++;
      return of(shopId).at(-1) ?? null;
    },
    entriesSince: async (shopId, at) =>
      of(shopId)
        .filter((e) => e.at >= at)
        .reverse(),
    put: async (shopId, entry) => {
      if (failFor.has(entry.eventId)) throw new Error(`throttled on ${entry.eventId}`);
      if (of(shopId).some((e) => e.seq === entry.seq)) return false;
      feeds.set(
        shopId,
        [...of(shopId), entry].sort((a, b) => a.seq - b.seq),
      );
      return true;
    },
    markHour: async (_shopId, entry) => void hours.push([entry.at.slice(0, 13), entry.seq]),
    firstSeqAround: async () => 0,
    entries: async () => ({ entries: [], more: false }),
    events: async () => new Map(),
  };
  const ids = (shopId: string) => of(shopId).map((e) => e.eventId);
  const places = (shopId: string) => of(shopId).map((e) => e.seq - (of(shopId)[0]?.seq ?? 0));
  return { store, ids, places, hours, reads };
}

const at = (ms: number) => () => new Date(ms);

describe('appending to the event feed', () => {
  it("gives an entry the latest of its event's time, the appender's clock and the entry before, and its place", () => {
    const e = event('shop_a', 1);
    // A feed's first place is its first event's time in milliseconds.
    expect(successor(null, e, new Date(T - 5_000))).toMatchObject({ at: e.timestamp, seq: T, eventId: e.id });
    expect(successor(null, e, new Date(T + 700)).at).toBe(new Date(T + 700).toISOString());
    const ahead = new Date(T + 2_000).toISOString();
    const last = { at: ahead, seq: 4, eventId: 'evt_x', type: 'job.created' };
    expect(successor(last, e, new Date(T))).toMatchObject({ at: ahead, seq: 5, type: 'job.created' });
    // After a shop was quiet for the retention, whichever expired entry an appender still finds.
    const daysAgo = (days: number) => ({ ...last, at: new Date(T - days * 86_400_000).toISOString() });
    expect(successor(daysAgo(30), e, new Date(T)).seq).toBe(T);
    expect(successor(daysAgo(29.5), e, new Date(T)).seq).toBe(T);
    expect(successor(daysAgo(28), e, new Date(T)).seq).toBe(5);
  });

  it("stops a shop at the first event it cannot append and sends that one and its shop's later ones back", async () => {
    const a = [1, 2, 3, 4].map((n) => event('shop_a', n));
    const b = [1, 2].map((n) => event('shop_b', n));
    const feed = memoryFeed(new Set([a[1]!.id]));
    const failed = await appendToFeed({ feed: feed.store, now: at(T) }, [a[0]!, b[0]!, a[1]!, a[2]!, b[1]!, a[3]!]);
    expect([...failed.keys()]).toEqual([a[1]!.id, a[2]!.id, a[3]!.id]);
    expect(failed.get(a[3]!.id)?.message).toBe(`throttled on ${a[1]!.id}`);
    expect(feed.ids('shop_a')).toEqual([a[0]!.id]);
    expect(feed.ids('shop_b')).toEqual([b[0]!.id, b[1]!.id]);
    expect(feed.places('shop_b')).toEqual([0, 1]);
  });

  it('appends what batches bring again only once: side by side, shorter, longer', async () => {
    const a = [1, 2, 3, 4, 5, 6].map((n) => event('shop_a', n, -n * 300));
    const feed = memoryFeed();
    const deps = { feed: feed.store, now: at(T) };
    // A retried batch beside the slow first try of it.
    await Promise.all([appendToFeed(deps, a.slice(0, 4)), appendToFeed(deps, a.slice(0, 4))]);
    // Retried with fewer of the records it had, then with more.
    await appendToFeed(deps, a.slice(0, 2));
    await appendToFeed(deps, a.slice(1));
    expect(feed.ids('shop_a')).toEqual(a.map((e) => e.id));
    expect(feed.places('shop_a')).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('keeps appending while another appender takes the places it tries, as long as its events get in', async () => {
    const feed = memoryFeed();
    const a = Array.from({ length: 20 }, (_, n) => event('shop_a', n));
    // The same batch beside it, always a step ahead: every place this one tries is taken by that event.
    const racing: EventFeedStore = {
      ...feed.store,
      put: async (shopId, entry) => {
        await feed.store.put(shopId, entry);
        return false;
      },
    };
    expect((await appendToFeed({ feed: racing, now: at(T) }, a)).size).toBe(0);
    expect(feed.ids('shop_a')).toEqual(a.map((e) => e.id));
    // An appender whose places go to events it does not have gives up, and its batch comes back.
    let other = 0;
    const crowded: EventFeedStore = {
      ...feed.store,
      put: async (shopId, entry) => {
        await feed.store.put(shopId, { ...entry, eventId: `evt_other_${other++}` });
        return false;
      },
    };
    const b = [event('shop_a', 99)];
    expect([...(await appendToFeed({ feed: crowded, now: at(T) }, b)).values()].map((e) => e.message)).toEqual([
      'the feed of shop shop_a kept moving',
    ]);
  });

  it('marks the first entry of each hour', async () => {
    const feed = memoryFeed();
    const a = [1, 2, 3].map((n) => event('shop_a', n));
    await appendToFeed({ feed: feed.store, now: at(T) }, a.slice(0, 2));
    await appendToFeed({ feed: feed.store, now: at(T + 3_600_000) }, a.slice(2));
    expect(feed.hours).toEqual([
      ['2026-11-28T12', T],
      ['2026-11-28T13', T + 2],
    ]);
  });

  it('appends after the entry it remembers, and reads the feed when another process appended since', async () => {
    const feed = memoryFeed();
    const a = [1, 2, 3, 4, 5].map((n) => event('shop_a', n, n));
    const processOf = () => ({ feed: feed.store, now: at(T + 10), lastEntries: new LastEntries() });
    const [one, two] = [processOf(), processOf()];
    await appendToFeed(one, [a[0]!]);
    await appendToFeed(one, [a[1]!]);
    expect(feed.reads.last).toBe(1);
    await appendToFeed(two, [a[2]!]);
    // One's next place is taken by two's append: it reads the feed and appends after it.
    await appendToFeed(one, [a[3]!]);
    // A retried batch: the remembered entry is its first event's, so only the second is appended.
    await appendToFeed(one, a.slice(3));
    expect(feed.ids('shop_a')).toEqual(a.map((e) => e.id));
    expect(feed.places('shop_a')).toEqual([0, 1, 2, 3, 4]);
    expect(feed.reads.last).toBe(3);
  });

  it('remembers a bounded number of shops, forgetting the one remembered longest ago', () => {
    const entry = (seq: number) => ({ at: new Date(T).toISOString(), seq, eventId: `evt_${seq}`, type: 'job.created' });
    const remembered = new LastEntries(2);
    remembered.set('shop_a', entry(1));
    remembered.set('shop_b', entry(2));
    remembered.set('shop_a', entry(3));
    remembered.set('shop_c', entry(4));
    expect([remembered.get('shop_a')?.seq, remembered.get('shop_b'), remembered.get('shop_c')?.seq]).toEqual([
      3,
      undefined,
      4,
    ]);
  });
});
