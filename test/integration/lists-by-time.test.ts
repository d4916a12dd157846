import { makeHandler as makeListCalls } from '../../functions/api/list-calls';
import { makeHandler as makeListEvents } from '../../functions/api/list-events';
import { makeHandler as makeListJobs } from '../../functions/api/list-jobs';
import { simulatedCall } from '../../lib/cli/simulate';
import { ingestCall } from '../../shared/domain/calls';
import { approveJob } from '../../shared/domain/jobs';
import { createShop, type Shop } from '../../shared/domain/shop';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { validateResponse } from '../helpers/openapi-validator';
import { useFreshTable } from '../helpers/table';

// Ids are monotonic per process (never earlier than one made before): the calls are made ahead of now.
const T0 = Math.ceil((Date.now() + 86_400_000) / 60_000) * 60_000;
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

type Listed = { statusCode: number; body: string };
type Make = (
  deps: () => Deps,
) => (event: ReturnType<typeof apiEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;

/** Lists by creation time (and jobs by their last change) through the handlers, on DynamoDB Local. */
describe('lists by time: created_after, created_before, updated_after (DynamoDB Local)', () => {
  let deps: Deps;
  let shop: Shop;
  const calls: { id: string; minute: number; jobId: string }[] = [];
  beforeAll(async () => {
    deps = await useFreshTable();
    shop = await createShop(deps, { name: 'Sync Shop', owner_email: 'o@sync.test' });
    // One call with a job a minute, from minute 0 to 9.
    for (let minute = 0; minute < 10; minute++) {
      const input = simulatedCall(shop, { withJob: true, emergency: false, endedAt: at(minute) });
      const made = await ingestCall({ ...deps, now: () => at(minute) }, input);
      calls.push({ id: made.call_id, minute, jobId: made.job_ids[0] as string });
    }
    // Jobs of minutes 2 and 7 are approved at minute 30.
    for (const minute of [2, 7])
      await approveJob({ ...deps, now: () => at(30) }, shop.id, calls[minute]?.jobId as string, { version: 1 });
  });

  async function list(make: Make, path: string, query: Record<string, string>) {
    const handler = make(() => deps);
    const res = (await handler(
      apiEvent({ method: 'GET', path, query, principal: principal({ shopId: shop.id }) }),
      context(),
    )) as Listed;
    const body = parseBody(res);
    validateResponse('GET', path, res.statusCode, body);
    return {
      status: res.statusCode,
      body: body as { data: { id: string }[]; next_cursor: string | null } & Record<string, unknown>,
    };
  }

  /** Every id of a list, following its cursor, with pages of `limit`. */
  async function all(make: Make, path: string, query: Record<string, string>, limit = 3) {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(make, path, { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      ids.push(...page.body.data.map((d) => d.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    return ids;
  }

  const callIds = (from: number, to: number) =>
    calls
      .filter((c) => c.minute >= from && c.minute <= to)
      .map((c) => c.id)
      .reverse();

  it('calls strictly between the bounds, newest first, across pages', async () => {
    expect(await all(makeListCalls, '/v1/calls', { created_after: iso(2), created_before: iso(7) })).toEqual(
      callIds(3, 6),
    );
    expect(await all(makeListCalls, '/v1/calls', { created_after: iso(8) })).toEqual(callIds(9, 9));
    expect(await all(makeListCalls, '/v1/calls', { created_before: iso(1) })).toEqual(callIds(0, 0));
    // Any offset is the same instant.
    expect(
      await all(makeListCalls, '/v1/calls', {
        created_after: new Date(T0 + 2 * 60_000 - 6 * 3_600_000).toISOString().replace('Z', '-06:00'),
      }),
    ).toEqual(callIds(3, 9));
    // Bounds that leave nothing between them: an empty list, not an error.
    expect(await all(makeListCalls, '/v1/calls', { created_after: iso(5), created_before: iso(5) })).toEqual([]);
    expect(await all(makeListCalls, '/v1/calls', { created_before: '1969-12-31T00:00:00Z' })).toEqual([]);
  });

  it('jobs by creation and by their last change, with a status too; events by creation and type', async () => {
    const jobIds = (minutes: number[]) => minutes.map((m) => calls[m]?.jobId as string);
    expect(await all(makeListJobs, '/v1/jobs', { created_after: iso(6) })).toEqual(jobIds([9, 8, 7]));
    expect(await all(makeListJobs, '/v1/jobs', { updated_after: iso(20) }, 1)).toEqual(jobIds([7, 2]));
    expect(await all(makeListJobs, '/v1/jobs', { updated_after: iso(20), created_after: iso(4) })).toEqual(jobIds([7]));
    expect(await all(makeListJobs, '/v1/jobs', { status: 'pending', created_before: iso(3) })).toEqual(jobIds([1, 0]));
    const events = await all(makeListEvents, '/v1/events', { type: 'job.approved', created_after: iso(29) });
    expect(events).toHaveLength(2);
    expect(await all(makeListEvents, '/v1/events', { created_after: iso(8), created_before: iso(10) })).toHaveLength(2);
  });

  it('a cursor made under other filters is 400; a bad timestamp is 400 naming its parameter', async () => {
    const first = await list(makeListCalls, '/v1/calls', { created_after: iso(2), limit: '2' });
    const cursor = first.body.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const other = await list(makeListCalls, '/v1/calls', { created_after: iso(3), limit: '2', cursor });
    expect([other.status, (other.body.error as { code: string }).code]).toEqual([400, 'invalid_cursor']);
    for (const [path, make, param] of [
      ['/v1/calls', makeListCalls, 'created_after'],
      ['/v1/jobs', makeListJobs, 'updated_after'],
      ['/v1/events', makeListEvents, 'created_before'],
    ] as const) {
      for (const value of ['yesterday', '2026-11-24', '2026-11-24T12:00:00', '2026-13-01T00:00:00Z']) {
        const bad = await list(make, path, { [param]: value });
        expect([path, value, bad.status, (bad.body.error as { param: string }).param]).toEqual([
          path,
          value,
          400,
          param,
        ]);
      }
    }
  });
});
