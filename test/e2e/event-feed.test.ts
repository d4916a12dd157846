import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import type { Scope } from '../../shared/domain/scopes';
import { encodeFeedCursor } from '../../shared/http/feed-cursor';
import { eventsOf } from '../helpers/events-in-table';
import { call, expectError } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

type FeedEvent = { id: string; type: string; data: { id: string } };

/** Following GET /v1/events/feed over HTTP while writers whose clocks differ commit events. */
describe('the event feed over HTTP', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack();
  }, 60_000);
  afterAll(() => stack.stop());

  const keyWith = async (scopes: Scope[]) =>
    (await issueKey(stack.deps.apiKeys, { shopId: stack.demo.shop.id, scopes, write: false, mode: 'test' })).key;

  const page = (key: string, query: string) => call(stack.url, 'GET', `/v1/events/feed?${query}`, { key });

  /** Follows the feed from its start until `done(seen)` holds and the feed has nothing more. */
  async function follow(key: string, done: (seen: FeedEvent[]) => boolean, query = '') {
    const seen: FeedEvent[] = [];
    let cursor: string | undefined;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const reply = await page(key, `limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}${query}`);
      expect(reply.status).toBe(200);
      seen.push(...(reply.json.data as FeedEvent[]));
      cursor = reply.json.next_cursor as string;
      const finished = done(seen);
      if (!reply.json.has_more && finished) return { seen, cursor };
      if (!reply.json.has_more) await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the follower saw ${seen.length} events before its deadline`);
  }

  it('gives a follower every event once, in commit order, while writers with skewed clocks commit', async () => {
    const shop = stack.demo.shop;
    const key = await keyWith(['calls:read', 'jobs:read', 'webhooks:read']);
    // Four writers, clocks from 1 s behind to 1 s ahead, each committing one call after another.
    const commits: { resource: string; started: number; ended: number }[] = [];
    const writers = [-1000, -300, 400, 1000].map(async (skew) => {
      const deps = { ...stack.deps, now: () => new Date(Date.now() + skew) };
      for (let i = 0; i < 12; i++) {
        const started = performance.now();
        const made = await ingestCall(
          deps,
          simulatedCall(shop, { withJob: i % 3 === 0, emergency: false, endedAt: deps.now() }),
        );
        commits.push({ resource: made.call_id, started, ended: performance.now() });
      }
    });
    // Every event appears within a few seconds of its commit: 48 calls and 16 jobs in all.
    const following = follow(key, (seen) => seen.length >= 48 + 16);
    await Promise.all(writers);
    const { seen, cursor } = await following;
    expect((await page(key, `cursor=${encodeURIComponent(cursor)}`)).json.data).toEqual([]);

    const committed = await eventsOf(stack.deps, shop.id);
    expect(committed.length).toBe(48 + 16);
    expect(seen.map((e) => e.id).sort()).toEqual(committed.map((e) => e.id).sort());
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    // A call committed after another call's commit had ended comes after it.
    const position = new Map(seen.filter((e) => e.type === 'call.completed').map((e, i) => [e.data.id, i]));
    for (const a of commits)
      for (const b of commits)
        if (a.ended < b.started) expect(position.get(a.resource)).toBeLessThan(position.get(b.resource) as number);
  }, 120_000);

  it('shows a key only the families it may read, and names the scope it lacks', async () => {
    const callsOnly = await keyWith(['calls:read']);
    const { seen } = await follow(callsOnly, () => true);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((e) => e.type))).toEqual(new Set(['call.completed']));
    const refused = expectError(await page(callsOnly, 'types=job.*'), 403, 'insufficient_scope');
    expect(refused.message).toContain("'jobs:read'");
    expectError(await page(await keyWith(['settings:read']), ''), 403, 'insufficient_scope');
  });

  it('answers 410 to a cursor past the retention, and 400 to one it did not issue', async () => {
    const key = await keyWith(['calls:read']);
    const old = encodeFeedCursor(
      { at: new Date(Date.now() - 31 * 86_400_000).toISOString(), seq: 1 },
      stack.demo.shop.id,
      await stack.deps.cursorKey(),
    );
    const expired = expectError(await page(key, `cursor=${encodeURIComponent(old)}`), 410, 'cursor_expired');
    expect(expired.message).toContain('since');
    expect(expectError(await page(key, 'cursor=abc.def'), 400, 'parameter_invalid').param).toBe('cursor');
    expect(expectError(await page(key, 'types=jobs'), 400, 'parameter_invalid').param).toBe('types');
    const both = await page(key, `cursor=${encodeURIComponent(old)}&since=${new Date().toISOString()}`);
    expectError(both, 400, 'parameter_invalid');
  });
});
