import { makeHandler as makeIngestHandler } from '../../functions/ingest';
import { simulatedCall } from '../../lib/cli/simulate';
import { ingestCall, toCallResource, type CallBatch } from '../../shared/domain/calls';
import { approveJob, declineJob } from '../../shared/domain/jobs';
import { createShop, type Shop } from '../../shared/domain/shop';
import { newId } from '../../shared/ids';
import { logger } from '../../shared/logger';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { keys } from '../../shared/store/keys';
import { eventsOf } from '../helpers/events-in-table';
import { useFreshTable } from '../helpers/table';

describe('calls and jobs in the store (DynamoDB Local)', () => {
  let deps: Deps;
  let shop: Shop;
  beforeAll(async () => {
    deps = await useFreshTable();
    shop = await createShop(deps, { name: 'Ingest Shop', owner_email: 'o@ingest.test' });
  });

  const simulate = (s: Shop, withJob = true) => simulatedCall(s, { withJob, emergency: false, endedAt: new Date() });

  it('N calls with jobs write exactly N call.completed and N job.created events, matching their subjects', async () => {
    const own = await createShop(deps, { name: 'Events Shop', owner_email: 'o@events.test' });
    const results = [];
    for (let i = 0; i < 12; i++) results.push(await ingestCall(deps, simulate(own)));
    const events = await eventsOf(deps, own.id);
    const completed = events.filter((e) => e.type === 'call.completed');
    const created = events.filter((e) => e.type === 'job.created');
    expect([completed.length, created.length, events.length]).toEqual([12, 12, 24]);
    expect(completed.map((e) => e.data.id).sort()).toEqual(results.map((r) => r.call_id).sort());
    expect(created.map((e) => e.data.id).sort()).toEqual(results.flatMap((r) => r.job_ids).sort());
    const call = await deps.calls.get(own.id, results[0]?.call_id as string);
    expect(completed.find((e) => e.data.id === call?.id)?.data).toEqual(toCallResource(call!));
  });

  it('debits the call credits from the shop', async () => {
    const own = await createShop(deps, { name: 'Credit Shop', owner_email: 'o@credit.test' });
    const a = simulate(own, false);
    const b = simulate(own, false);
    await ingestCall(deps, a);
    await ingestCall(deps, b);
    const used = (a.summary?.usage.credits ?? 0) + (b.summary?.usage.credits ?? 0);
    expect((await deps.shops.get(own.id))?.credits).toEqual({ balance: 500 - used, used_this_period: used });
  });

  it('a failed transaction leaves neither the subject nor its event', async () => {
    // The shop lookup says yes but the shop is not in the table: the credit update's
    // condition fails inside the transaction, after the call, job and events were staged.
    const ghost: Shop = { ...shop, id: newId('shop') };
    const input = simulate(ghost);
    const spy = jest.spyOn(deps.calls, 'record');
    await expect(
      ingestCall({ ...deps, shops: { ...deps.shops, get: async () => ghost } }, input),
    ).rejects.toMatchObject({ code: 'resource_missing' });
    const batch = spy.mock.calls[0]?.[0] as CallBatch;
    spy.mockRestore();
    expect([batch.jobs.length, batch.events.length]).toEqual([1, 2]);
    expect(await deps.calls.get(ghost.id, batch.call.id)).toBeNull();
    expect(await deps.calls.getTranscript(ghost.id, batch.call.id)).toBeNull();
    expect(await deps.jobs.get(ghost.id, batch.jobs[0]!.id)).toBeNull();
    expect(await eventsOf(deps, ghost.id)).toEqual([]);
    const marker = await deps.db.doc.get({
      TableName: deps.db.tableName,
      Key: keys.callExternal(ghost.id, input.external_id),
    });
    expect(marker.Item).toBeUndefined();
  });

  it('a retried ingest (same external_id) records nothing twice', async () => {
    const own = await createShop(deps, { name: 'Retry Shop', owner_email: 'o@retry.test' });
    const input = simulate(own);
    const first = await ingestCall(deps, input);
    const again = await ingestCall(deps, input);
    expect(again).toEqual({ call_id: first.call_id, job_ids: [], event_ids: [], duplicate: true });
    expect(await eventsOf(deps, own.id)).toHaveLength(2);
    expect((await deps.shops.get(own.id))?.credits.used_this_period).toBe(input.summary?.usage.credits);
  });

  it('a refused approval writes no event; approve and decline write exactly one each', async () => {
    const own = await createShop(deps, { name: 'Decide Shop', owner_email: 'o@decide.test' });
    const [a, b] = [await ingestCall(deps, simulate(own)), await ingestCall(deps, simulate(own))];
    await expect(approveJob(deps, own.id, a.job_ids[0]!, { version: 7 })).rejects.toMatchObject({
      code: 'version_conflict',
      options: { extra: { current_version: 1 } },
    });
    expect(await approveJob(deps, own.id, a.job_ids[0]!, { version: 1 })).toMatchObject({
      status: 'approved',
      version: 2,
    });
    expect(await declineJob(deps, own.id, b.job_ids[0]!, { version: 1, reason: 'Outside our area' })).toMatchObject({
      status: 'declined',
      decline_reason: 'Outside our area',
    });
    await expect(declineJob(deps, own.id, a.job_ids[0]!, { version: 2 })).rejects.toMatchObject({
      code: 'invalid_state',
    });
    const types = (await eventsOf(deps, own.id))
      .map((e) => e.type)
      .filter((t) => t.startsWith('job.') && t !== 'job.created');
    expect(types.sort()).toEqual(['job.approved', 'job.declined']);
  });

  it('a shop that books automatically gets its jobs approved at creation', async () => {
    const own = await createShop(deps, { name: 'Auto Shop', owner_email: 'o@auto.test' });
    await deps.shops.update(own.id, { fields: { booking_mode: 'auto_book' }, hours: {} }, new Date().toISOString());
    const r = await ingestCall(deps, simulate({ ...own, booking_mode: 'auto_book' }));
    expect(await deps.jobs.get(own.id, r.job_ids[0]!)).toMatchObject({
      status: 'approved',
      decided_at: expect.any(String),
    });
  });
});

describe('ingest handler, invoked directly by the voice platform', () => {
  let deps: Deps;
  let shop: Shop;
  beforeAll(async () => {
    deps = await useFreshTable();
    shop = await createShop(deps, { name: 'Handler Shop', owner_email: 'o@handler.test' });
  });
  // A direct invocation answers bad input itself: it never sets a message aside.
  const directDeps = () => ({
    ...deps,
    ingestDeadLetters: { setAside: () => Promise.reject(new Error('a direct invocation sets nothing aside')) },
  });

  it('records a valid call and refuses bad payloads with the field named', async () => {
    const handler = makeIngestHandler(directDeps);
    const valid = simulatedCall(shop, { withJob: true, emergency: true, endedAt: new Date() });
    const ok = await handler(valid);
    expect(ok).toMatchObject({
      ok: true,
      result: { call_id: expect.stringMatching(/^call_/), job_ids: [expect.stringMatching(/^job_/)], duplicate: false },
    });
    expect(await handler({ ...valid, from_number: '555-1234' })).toMatchObject({
      ok: false,
      error: { code: 'parameter_invalid', param: 'from_number' },
    });
    expect(await handler({ ...valid, ended_at: '2000-01-01T00:00:00Z' })).toMatchObject({
      ok: false,
      error: { param: 'ended_at' },
    });
    expect(await handler({ ...valid, shop_id: 'shop_01jd0000000000000000000000', external_id: 'x-1' })).toMatchObject({
      ok: false,
      error: { code: 'resource_missing' },
    });
    expect(await handler('not an object')).toEqual({
      ok: false,
      error: { code: 'parameter_invalid', message: 'The input must be a JSON object, not a string.', param: null },
    });
    expect(await handler({ ...valid, caller_name: 'Pat\u0000' })).toMatchObject({
      ok: false,
      error: { code: 'parameter_invalid', param: 'caller_name' },
    });
  });

  it('from the queue, records a call once however often SQS delivers its message (external_id)', async () => {
    const own = await createShop(deps, { name: 'Redelivery Shop', owner_email: 'o@redelivery.test' });
    const handler = makeIngestHandler(directDeps);
    const body = JSON.stringify(simulatedCall(own, { withJob: true, emergency: false, endedAt: new Date() }));
    const delivery = (messageId: string) => ({ Records: [{ messageId, body, eventSource: 'aws:sqs' }] }) as never;
    expect(await handler(delivery('m-1'))).toEqual({ batchItemFailures: [] });
    expect(await handler(delivery('m-1-again'))).toEqual({ batchItemFailures: [] });
    const events = await eventsOf(deps, own.id);
    expect(events.map((e) => e.type).sort()).toEqual(['call.completed', 'job.created']);
    expect((await deps.shops.get(own.id))?.credits.used_this_period).toBe(
      (JSON.parse(body) as { summary: { usage: { credits: number } } }).summary.usage.credits,
    );
  });

  it('logs a refusal with its code and reason (not as `message`, which the log line reserves)', async () => {
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const refused = await makeIngestHandler(directDeps)('not an object');
      expect(refused.ok).toBe(false);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]).toEqual([
        'Ingest refused',
        { code: 'parameter_invalid', reason: refused.ok ? undefined : refused.error.message },
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});
