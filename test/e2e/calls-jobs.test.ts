import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop, type Shop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { eventsOf } from '../helpers/events-in-table';
import { call, expectError } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

describe('calls and jobs over HTTP', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  let key: string;
  let shop: Shop;
  let other: { shop: Shop; key: string; callId: string; jobId: string };
  const callIds: string[] = [];
  const jobIds: string[] = [];

  const simulate = async (s: Shop, withJob: boolean, endedAt = new Date()) =>
    ingestCall(stack.deps, simulatedCall(s, { withJob, emergency: false, endedAt }));

  beforeAll(async () => {
    stack = await startTestStack();
    key = stack.demo.writeKey.key;
    shop = stack.demo.shop;
    for (let i = 0; i < 250; i++) {
      const r = await simulate(shop, i % 10 === 0);
      callIds.push(r.call_id);
      jobIds.push(...r.job_ids);
    }
    const otherShop = await createShop(stack.deps, { name: 'Other Shop', owner_email: 'o@other.test' });
    const otherKey = await issueKey(stack.deps.apiKeys, {
      shopId: otherShop.id,
      scopes: [...SCOPES],
      write: true,
      mode: 'test',
    });
    const r = await simulate(otherShop, true);
    other = { shop: otherShop, key: otherKey.key, callId: r.call_id, jobId: r.job_ids[0] as string };
  }, 120000);
  afterAll(() => stack.stop());

  it('pages through 250 calls with limit=100: each exactly once, newest first', async () => {
    const seen: string[] = [];
    const pages: boolean[] = [];
    let cursor: string | null = null;
    do {
      const reply = await call(
        stack.url,
        'GET',
        `/v1/calls?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { key },
      );
      expect(reply.status).toBe(200);
      expect(reply.json.object).toBe('list');
      seen.push(...(reply.json.data as { id: string }[]).map((c) => c.id));
      pages.push(reply.json.has_more as boolean);
      cursor = reply.json.next_cursor as string | null;
    } while (cursor);
    expect(pages).toEqual([true, true, false]);
    expect(seen).toEqual([...callIds].reverse());
    const defaultPage = await call(stack.url, 'GET', '/v1/calls', { key });
    expect((defaultPage.json.data as unknown[]).length).toBe(20);
  });

  it.each(['0', '101', 'abc', '-1', '1.5', ''])('limit=%s → 400 parameter_invalid', async (limit) => {
    const error = expectError(
      await call(stack.url, 'GET', `/v1/calls?limit=${limit}`, { key }),
      400,
      'parameter_invalid',
    );
    expect(error.param).toBe('limit');
  });

  it('refuses a cursor from another shop, another list, or with one character changed', async () => {
    const first = await call(stack.url, 'GET', '/v1/calls?limit=5', { key });
    const cursor = first.json.next_cursor as string;
    expectError(
      await call(stack.url, 'GET', `/v1/calls?cursor=${encodeURIComponent(cursor)}`, { key: other.key }),
      400,
      'invalid_cursor',
    );
    expectError(
      await call(stack.url, 'GET', `/v1/jobs?cursor=${encodeURIComponent(cursor)}`, { key }),
      400,
      'invalid_cursor',
    );
    for (const i of [0, Math.floor(cursor.length / 2), cursor.length - 1]) {
      const flipped = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
      expectError(
        await call(stack.url, 'GET', `/v1/calls?cursor=${encodeURIComponent(flipped)}`, { key }),
        400,
        'invalid_cursor',
      );
    }
    expectError(
      await call(stack.url, 'GET', `/v1/calls?cursor=${encodeURIComponent(cursor.slice(0, -4))}`, { key }),
      400,
      'invalid_cursor',
    );
    expectError(await call(stack.url, 'GET', '/v1/calls?cursor=garbage', { key }), 400, 'invalid_cursor');
  });

  it('reads a call, its transcript and its summary', async () => {
    const id = callIds[0] as string;
    const c = await call(stack.url, 'GET', `/v1/calls/${id}`, { key });
    expect(c.json).toMatchObject({
      id,
      object: 'call',
      direction: 'inbound',
      status: 'completed',
      outcome: 'job_created',
    });
    const t = await call(stack.url, 'GET', `/v1/calls/${id}/transcript`, { key });
    expect(t.json).toMatchObject({ object: 'transcript', call_id: id });
    expect((t.json.turns as { index: number }[]).map((x) => x.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const s = await call(stack.url, 'GET', `/v1/calls/${id}/summary`, { key });
    expect(s.json).toMatchObject({
      object: 'call_summary',
      call_id: id,
      outcome: 'job_created',
      usage: { credits: expect.any(Number) },
    });
  });

  it.each([
    [
      "another shop's id",
      () => [
        `/v1/calls/${other.callId}`,
        `/v1/calls/${other.callId}/transcript`,
        `/v1/calls/${other.callId}/summary`,
        `/v1/jobs/${other.jobId}`,
      ],
    ],
    [
      'a wrong prefix',
      () => [
        `/v1/calls/${other.jobId}`,
        `/v1/jobs/${other.callId}`,
        `/v1/calls/${callIds[0]?.replace('call_', 'job_')}/summary`,
      ],
    ],
    [
      'garbage',
      () => ['/v1/calls/call_%27%3B--', '/v1/calls/..%2F..%2Fshop', '/v1/jobs/job_', `/v1/jobs/${'x'.repeat(500)}`],
    ],
  ])('%s → 404 resource_missing', async (_label, paths) => {
    for (const path of paths()) expectError(await call(stack.url, 'GET', path, { key }), 404, 'resource_missing');
    expectError(
      await call(stack.url, 'POST', `/v1/jobs/${other.jobId}/approve`, { key, body: { version: 1 } }),
      404,
      'resource_missing',
    );
  });

  it('50 concurrent approvals with the current version: one 200, the rest 409 version_conflict', async () => {
    const jobId = jobIds[0] as string;
    const replies = await Promise.all(
      Array.from({ length: 50 }, () =>
        call(stack.url, 'POST', `/v1/jobs/${jobId}/approve`, { key, body: { version: 1 } }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200))
      expect(expectError(r, 409, 'version_conflict').current_version).toBe(2);
    const job = await call(stack.url, 'GET', `/v1/jobs/${jobId}`, { key });
    expect(job.json).toMatchObject({ status: 'approved', version: 2, decided_at: expect.any(String) });
    const approved = (await eventsOf(stack.deps, shop.id)).filter(
      (e) => e.type === 'job.approved' && e.data.id === jobId,
    );
    expect(approved).toHaveLength(1);
    expect(approved[0]?.data).toEqual(job.json);
  });

  it('approve or decline of a non-pending job → 409 invalid_state; decline stores the reason', async () => {
    const jobId = jobIds[1] as string;
    const declined = await call(stack.url, 'POST', `/v1/jobs/${jobId}/decline`, {
      key,
      body: { version: 1, reason: 'Outside our service area' },
    });
    expect(declined.json).toMatchObject({ status: 'declined', version: 2, decline_reason: 'Outside our service area' });
    expectError(
      await call(stack.url, 'POST', `/v1/jobs/${jobId}/approve`, { key, body: { version: 2 } }),
      409,
      'invalid_state',
    );
    expectError(
      await call(stack.url, 'POST', `/v1/jobs/${jobId}/decline`, { key, body: { version: 2 } }),
      409,
      'invalid_state',
    );
    expect((await call(stack.url, 'GET', `/v1/jobs/${jobId}`, { key })).json.decline_reason).toBe(
      'Outside our service area',
    );
  });

  it.each([
    [{}, 'parameter_missing', 'version'],
    [{ version: '1' }, 'parameter_invalid', 'version'],
    [{ version: 0 }, 'parameter_invalid', 'version'],
    [{ version: 1, note: 'x' }, 'parameter_unknown', 'note'],
  ])('approve with %j → 400 %s', async (body, code, param) => {
    expect(
      expectError(await call(stack.url, 'POST', `/v1/jobs/${jobIds[2]}/approve`, { key, body }), 400, code).param,
    ).toBe(param);
  });

  it('?status=pending returns only pending jobs, paginated; an unknown status is 400', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const reply = await call(
        stack.url,
        'GET',
        `/v1/jobs?status=pending&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { key },
      );
      const data = reply.json.data as { id: string; status: string }[];
      expect(data.every((j) => j.status === 'pending')).toBe(true);
      seen.push(...data.map((j) => j.id));
      cursor = reply.json.next_cursor as string | null;
    } while (cursor);
    expect(seen).toEqual(jobIds.slice(2).reverse());
    const approved = await call(stack.url, 'GET', '/v1/jobs?status=approved', { key });
    expect((approved.json.data as { id: string }[]).map((j) => j.id)).toEqual([jobIds[0]]);
    const all = await call(stack.url, 'GET', '/v1/jobs?limit=100', { key });
    expect((all.json.data as unknown[]).length).toBe(jobIds.length);
    expect(
      expectError(await call(stack.url, 'GET', '/v1/jobs?status=done', { key }), 400, 'parameter_invalid').param,
    ).toBe('status');
  });

  it('an Idempotency-Key replays an approval instead of reporting a conflict', async () => {
    const jobId = jobIds[3] as string;
    const send = () =>
      call(stack.url, 'POST', `/v1/jobs/${jobId}/approve`, {
        key,
        body: { version: 1 },
        headers: { 'idempotency-key': `approve-${jobId}` },
      });
    const first = await send();
    const again = await send();
    expect([first.status, again.status, again.headers.get('idempotent-replayed'), again.text]).toEqual([
      200,
      200,
      'true',
      first.text,
    ]);
  });

  it('scopes: transcripts need transcripts:read, jobs need jobs:read', async () => {
    const { key: callsOnly } = await issueKey(stack.deps.apiKeys, {
      shopId: shop.id,
      scopes: ['calls:read'],
      write: false,
      mode: 'test',
    });
    expect((await call(stack.url, 'GET', `/v1/calls/${callIds[0]}`, { key: callsOnly })).status).toBe(200);
    expectError(
      await call(stack.url, 'GET', `/v1/calls/${callIds[0]}/transcript`, { key: callsOnly }),
      403,
      'insufficient_scope',
    );
    expectError(await call(stack.url, 'GET', '/v1/jobs', { key: callsOnly }), 403, 'insufficient_scope');
  });
});
