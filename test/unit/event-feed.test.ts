import {
  appendToFeed,
  successor,
  type AppendOutcome,
  type EventFeedStore,
  type FeedEntry,
  type FeedHead,
} from '../../shared/domain/event-feed';
import { newEvent, type EventRecord } from '../../shared/domain/events';

const T = Date.parse('2026-11-28T12:00:00.000Z');
const event = (shop: string, n: number, skewMs = 0): EventRecord =>
  newEvent(shop, 'job.created', { id: `job_${n}` }, new Date(T + skewMs));

/** A feed in memory whose appends can be made to fail for chosen events. */
function memoryFeed(failFor: Set<string> = new Set()) {
  const heads = new Map<string, FeedHead>();
  const entries: FeedEntry[] = [];
  const store: EventFeedStore = {
    head: async (shopId) => heads.get(shopId) ?? null,
    append: async (e, head, next): Promise<AppendOutcome> => {
      if (failFor.has(e.id)) throw new Error(`throttled on ${e.id}`);
      if (entries.some((x) => x.event.id === e.id)) return 'present';
      if ((heads.get(e.shop_id)?.seq ?? 0) !== (head?.seq ?? 0)) return 'moved';
      heads.set(e.shop_id, { at: next.at, seq: next.seq });
      entries.push(next);
      return 'appended';
    },
    entries: async () => ({ entries: [], more: false }),
  };
  return { store, entries };
}

describe('appending to the event feed', () => {
  it("gives an entry the latest of its event's time, the appender's clock and the entry before", () => {
    const e = event('shop_a', 1);
    expect(successor(null, e, new Date(T - 5_000))).toMatchObject({ at: e.timestamp, seq: 1 });
    expect(successor(null, e, new Date(T + 700)).at).toBe(new Date(T + 700).toISOString());
    const ahead = new Date(T + 2_000).toISOString();
    expect(successor({ at: ahead, seq: 4 }, e, new Date(T))).toMatchObject({ at: ahead, seq: 5 });
  });

  it("stops a shop at the first event it cannot append and sends that one and its shop's later ones back", async () => {
    const a = [1, 2, 3, 4].map((n) => event('shop_a', n));
    const b = [1, 2].map((n) => event('shop_b', n));
    const { store, entries } = memoryFeed(new Set([a[1]!.id]));
    const failed = await appendToFeed({ feed: store, now: () => new Date(T) }, [
      a[0]!,
      b[0]!,
      a[1]!,
      a[2]!,
      b[1]!,
      a[3]!,
    ]);
    expect([...failed.keys()]).toEqual([a[1]!.id, a[2]!.id, a[3]!.id]);
    expect(failed.get(a[3]!.id)?.message).toBe(`throttled on ${a[1]!.id}`);
    expect(entries.map((x) => [x.event.id, x.seq])).toEqual([
      [a[0]!.id, 1],
      [b[0]!.id, 1],
      [b[1]!.id, 2],
    ]);
  });

  it('appends what a retried batch brings again only once, reading the head again after another appender', async () => {
    const a = [1, 2, 3].map((n) => event('shop_a', n, -n * 300));
    const { store, entries } = memoryFeed();
    const deps = { feed: store, now: () => new Date(T) };
    await Promise.all([appendToFeed(deps, a), appendToFeed(deps, a)]);
    await appendToFeed(deps, a);
    expect(entries.map((x) => [x.event.id, x.seq])).toEqual(a.map((e, i) => [e.id, i + 1]));
  });
});
