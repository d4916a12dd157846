import { type FeedItem, InvalidRequestError, ShopCalls } from '../src';
import { type Recorded, type Reply, type Scripted, scriptedServer, testClient } from './support/server';

const event = (n: number) => ({ id: `evt_${n}`, object: 'event', type: 'job.created', timestamp: 't', data: {} });
const feed = (ids: number[], next: string, hasMore: boolean): Reply => ({
  status: 200,
  json: { object: 'event_feed', data: ids.map(event), next_cursor: next, has_more: hasMore },
});
const query = (r: Recorded) => Object.fromEntries(new URL(r.url, 'http://x').searchParams);
const seen = (items: FeedItem[]) => items.map(({ event: e, cursor }) => `${e.id}@${cursor}`);

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (script: Reply[]): Promise<Scripted> => (server = await scriptedServer(script));

async function take(iterator: AsyncIterable<FeedItem>, count: number): Promise<FeedItem[]> {
  const items: FeedItem[] = [];
  for await (const item of iterator) {
    items.push(item);
    if (items.length === count) break;
  }
  return items;
}

describe('events.follow', () => {
  it('yields each event once, with the cursor to resume from, waiting at the end of the feed', async () => {
    const { baseUrl, requests } = await serve([
      feed([1, 2, 3], 'c3', true),
      feed([4], 'c4', false),
      feed([], 'c4', false),
      feed([5], 'c5', false),
    ]);
    const { client, sleeps } = testClient(baseUrl);
    const items = await take(client.events.follow({ cursor: 'c0', pollIntervalMs: 1500 }), 5);
    // Within a page, the cursor the page began at; after a page's last event, its next_cursor.
    expect(seen(items)).toEqual(['evt_1@c0', 'evt_2@c0', 'evt_3@c3', 'evt_4@c4', 'evt_5@c5']);
    expect(requests.map((r) => query(r).cursor)).toEqual(['c0', 'c3', 'c4', 'c4']);
    expect(requests.map((r) => r.url.split('?')[0])).toEqual(Array(4).fill('/v1/events/feed'));
    // No wait after a page with more behind it; one after each page that reached the end.
    expect(sleeps).toEqual([1500, 1500]);
  });

  it('starts from `since` with one event, then goes on by cursor with the types asked for', async () => {
    const { baseUrl, requests } = await serve([feed([1], 'c1', true), feed([2, 3], 'c3', false)]);
    const { client } = testClient(baseUrl);
    const since = '2026-11-01T00:00:00.000Z';
    const items = await take(client.events.follow({ since, types: ['job.*', 'call.completed'], limit: 50 }), 3);
    expect(seen(items)).toEqual(['evt_1@c1', 'evt_2@c1', 'evt_3@c3']);
    expect(requests.map(query)).toEqual([
      { since, types: 'job.*,call.completed', limit: '1' },
      { cursor: 'c1', types: 'job.*,call.completed', limit: '50' },
    ]);
  });

  it('goes on at once past an empty page that has more behind it (a filtered stretch)', async () => {
    const { baseUrl } = await serve([feed([], 'c1', true), feed([], 'c2', true), feed([7], 'c7', false)]);
    const { client, sleeps } = testClient(baseUrl);
    const items = await take(client.events.follow({ cursor: 'c0', types: 'job.created' }), 1);
    expect(seen(items)).toEqual(['evt_7@c7']);
    expect(sleeps).toEqual([]);
  });

  it('asks again after the poll interval, from the last next_cursor, for as long as the feed is empty', async () => {
    const { baseUrl, requests } = await serve([feed([], 'c0', false), feed([], 'c0', false), feed([1], 'c1', false)]);
    const { client, sleeps } = testClient(baseUrl);
    const items = await take(client.events.follow(), 1);
    expect(seen(items)).toEqual(['evt_1@c1']);
    expect(sleeps).toEqual([5000, 5000]);
    expect(requests.map(query)).toEqual([{ limit: '1' }, { cursor: 'c0' }, { cursor: 'c0' }]);
  });

  it('ends quietly when the signal aborts during the wait', async () => {
    const { baseUrl, requests } = await serve([feed([1], 'c1', false)]);
    // The real timer, with an interval far longer than the test: only the abort can end the wait.
    const client = new ShopCalls({ apiKey: 'sk_test_x', baseUrl });
    const controller = new AbortController();
    const items: FeedItem[] = [];
    const started = Date.now();
    for await (const item of client.events.follow({
      cursor: 'c0',
      pollIntervalMs: 600_000,
      signal: controller.signal,
    })) {
      items.push(item);
      setTimeout(() => controller.abort(), 50);
    }
    expect(seen(items)).toEqual(['evt_1@c1']);
    expect(requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('ends quietly when the signal aborts a request in flight, and yields nothing after an abort', async () => {
    const { baseUrl } = await serve(['hang']);
    const { client } = testClient(baseUrl);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(take(client.events.follow({ signal: controller.signal }), 1)).resolves.toEqual([]);
    await server?.close();

    const again = await serve([feed([1, 2, 3], 'c3', false)]);
    const stopping = new AbortController();
    const items: FeedItem[] = [];
    for await (const item of testClient(again.baseUrl).client.events.follow({
      cursor: 'c0',
      signal: stopping.signal,
    })) {
      items.push(item);
      stopping.abort();
    }
    expect(seen(items)).toEqual(['evt_1@c0']);
  });

  it('throws an expired cursor as an InvalidRequestError with code cursor_expired', async () => {
    const expired = { error: { code: 'cursor_expired', message: 'start again with since', param: 'cursor' } };
    const { baseUrl } = await serve([{ status: 410, json: expired }]);
    const { client } = testClient(baseUrl);
    const error = await take(client.events.follow({ cursor: 'old' }), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 410, code: 'cursor_expired', param: 'cursor' });
  });

  it('refuses a cursor and since together, before any request', async () => {
    const { baseUrl, requests } = await serve([feed([], 'c', false)]);
    const { client } = testClient(baseUrl);
    const both = client.events.follow({ cursor: 'c0', since: '2026-11-01T00:00:00Z' });
    await expect(take(both, 1)).rejects.toThrow('follow takes a cursor or since, not both');
    expect(requests).toHaveLength(0);
  });

  it('gives one page of the feed with events.feed', async () => {
    const { baseUrl, requests } = await serve([feed([1, 2], 'c2', true)]);
    const { client } = testClient(baseUrl);
    const page = await client.events.feed({ cursor: 'c0', limit: 2 });
    expect(page).toMatchObject({ object: 'event_feed', next_cursor: 'c2', has_more: true });
    expect(page.data.map((e) => e.id)).toEqual(['evt_1', 'evt_2']);
    expect(query(requests[0] as Recorded)).toEqual({ cursor: 'c0', limit: '2' });
  });
});
