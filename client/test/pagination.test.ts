import { ApiError, type Call } from '../src';
import { type Recorded, type Reply, type Scripted, scriptedServer, testClient } from './support/server';

const call = (n: number) => ({ id: `call_${n}`, object: 'call' });
/** Three pages of calls, chosen by the cursor asked for: c2 and c3 lead to the second and third. */
const pages: Record<string, { data: unknown[]; next_cursor: string | null }> = {
  '': { data: [call(1), call(2)], next_cursor: 'c2' },
  c2: { data: [call(3), call(4)], next_cursor: 'c3' },
  c3: { data: [call(5)], next_cursor: null },
};
const byCursor = (request: Recorded): Reply => {
  const page = pages[new URL(request.url, 'http://x').searchParams.get('cursor') ?? ''];
  if (!page) return { status: 400, json: { error: { code: 'invalid_cursor', message: 'bad', request_id: 'r' } } };
  return { status: 200, json: { object: 'list', ...page, has_more: page.next_cursor !== null } };
};
const query = (r: Recorded) => Object.fromEntries(new URL(r.url, 'http://x').searchParams);

let server: Scripted;
beforeEach(async () => {
  server = await scriptedServer(byCursor);
});
afterEach(() => server.close());

describe('lists', () => {
  it('iterates every item to the end with for await, carrying the filters with each cursor', async () => {
    const { client } = testClient(server.baseUrl);
    const ids: string[] = [];
    for await (const item of client.calls.list({ limit: 2, created_after: '2026-11-01T00:00:00Z' })) ids.push(item.id);
    expect(ids).toEqual(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']);
    expect(server.requests.map(query)).toEqual([
      { limit: '2', created_after: '2026-11-01T00:00:00Z' },
      { limit: '2', created_after: '2026-11-01T00:00:00Z', cursor: 'c2' },
      { limit: '2', created_after: '2026-11-01T00:00:00Z', cursor: 'c3' },
    ]);
  });

  it('is a promise of the first page, asked for once even when iterated afterwards', async () => {
    const { client } = testClient(server.baseUrl);
    const list = client.calls.list();
    expect(server.requests).toHaveLength(0); // nothing is sent before it is awaited or iterated
    const first = await list;
    expect(first).toMatchObject({ object: 'list', next_cursor: 'c2', has_more: true });
    expect(first.data.map((c: Call) => c.id)).toEqual(['call_1', 'call_2']);
    const all: string[] = [];
    for await (const item of list) all.push(item.id);
    expect(all).toHaveLength(5);
    expect(server.requests).toHaveLength(3);
  });

  it('gives the pages themselves', async () => {
    const { client } = testClient(server.baseUrl);
    const sizes: number[] = [];
    for await (const page of client.calls.list().pages()) sizes.push(page.data.length);
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('collects into an array up to the limit, asking for no page beyond it', async () => {
    const { client } = testClient(server.baseUrl);
    const three = await client.calls.list().toArray({ limit: 3 });
    expect(three.map((c) => c.id)).toEqual(['call_1', 'call_2', 'call_3']);
    expect(server.requests).toHaveLength(2);
    const all = await client.calls.list().toArray({ limit: 100 });
    expect(all).toHaveLength(5);
  });

  it('refuses toArray without a bound, or one not an integer from 1 to 10 000, before any request', async () => {
    const { client } = testClient(server.baseUrl);
    const list = client.calls.list();
    for (const limit of [0, -1, 1.5, 10_001, Number.NaN]) {
      await expect(list.toArray({ limit })).rejects.toThrow(RangeError);
    }
    await expect((list as unknown as { toArray(): Promise<unknown> }).toArray()).rejects.toThrow(/needs a limit/);
    expect(server.requests).toHaveLength(0);
  });

  it('follows next_cursor past an empty page, until it is null', async () => {
    const script: Reply[] = [
      { status: 200, json: { object: 'list', data: [call(1)], has_more: true, next_cursor: 'a' } },
      { status: 200, json: { object: 'list', data: [], has_more: true, next_cursor: 'b' } },
      { status: 200, json: { object: 'list', data: [call(2)], has_more: false, next_cursor: null } },
    ];
    const sparse = await scriptedServer(script);
    const { client } = testClient(sparse.baseUrl);
    const items = await client.jobs.list({ updated_after: '2026-11-01T00:00:00Z' }).toArray({ limit: 10 });
    expect(items.map((j) => j.id)).toEqual(['call_1', 'call_2']);
    expect(sparse.requests).toHaveLength(3);
    await sparse.close();
  });

  it('throws a page’s error from the iteration', async () => {
    const failing = await scriptedServer([
      { status: 200, json: { object: 'list', data: [call(1)], has_more: true, next_cursor: 'x' } },
      { status: 500, json: { error: { code: 'internal_error', message: 'oops', request_id: 'req_x' } } },
    ]);
    const { client } = testClient(failing.baseUrl, { maxRetries: 0 });
    const seen: string[] = [];
    const iterate = async () => {
      for await (const event of client.events.list()) seen.push(event.id);
    };
    await expect(iterate()).rejects.toThrow(ApiError);
    expect(seen).toEqual(['call_1']);
    await failing.close();
  });

  it('takes a list that comes whole (webhook endpoints, event types) as one page', async () => {
    const whole = await scriptedServer([
      {
        status: 200,
        json: { object: 'list', data: [{ id: 'we_1' }, { id: 'we_2' }], has_more: false, next_cursor: null },
      },
    ]);
    const { client } = testClient(whole.baseUrl);
    const ids: string[] = [];
    for await (const endpoint of client.webhookEndpoints.list()) ids.push(endpoint.id);
    expect(ids).toEqual(['we_1', 'we_2']);
    expect(await client.eventTypes.list().toArray({ limit: 5 })).toHaveLength(2);
    expect(whole.requests.map((r) => r.url)).toEqual(['/v1/webhook-endpoints', '/v1/event-types']);
    await whole.close();
  });

  it('refuses to page on through a whole list that claims a next cursor, instead of looping', async () => {
    const odd = await scriptedServer([
      { status: 200, json: { object: 'list', data: [{ id: 'we_1' }], has_more: true, next_cursor: 'loop' } },
    ]);
    const { client } = testClient(odd.baseUrl);
    await expect(client.webhookEndpoints.list().toArray({ limit: 10 })).rejects.toThrow('takes no cursor');
    expect(odd.requests).toHaveLength(1);
    await odd.close();
  });
});
