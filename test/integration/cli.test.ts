import { runCli } from '../../lib/cli/run';
import { authenticate } from '../../shared/domain/api-keys';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { newDelivery } from '../../shared/domain/deliveries';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { useFreshTable } from '../helpers/table';

describe('operator CLI (DynamoDB Local)', () => {
  let deps: Deps;
  beforeAll(async () => {
    deps = await useFreshTable();
  });

  async function cli(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, () => deps, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('creates a shop, issues a key that authenticates, and revokes it', async () => {
    const shop = await cli('shop', 'create', '--name', 'CLI Heating', '--owner-email', 'o@cli.test', '--timezone', 'America/Denver', '--trade', 'hvac', '--json');
    expect(shop.code).toBe(0);
    const shopJson = JSON.parse(shop.out);
    expect(shopJson).toMatchObject({ object: 'shop', name: 'CLI Heating', timezone: 'America/Denver', trade: 'hvac' });

    const created = await cli('key', 'create', '--shop', shopJson.id, '--scopes', 'calls:read,jobs:read', '--mode', 'live', '--json');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key).toEqual({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^sk_live_/), shop_id: shopJson.id, scopes: ['calls:read', 'jobs:read'], write: false, mode: 'live' });
    expect(await authenticate(deps.apiKeys, `Bearer ${key.key}`)).toMatchObject({ ok: true });

    expect((await cli('key', 'revoke', '--key-id', key.id)).code).toBe(0);
    expect(await authenticate(deps.apiKeys, `Bearer ${key.key}`)).toMatchObject({ ok: false, code: 'invalid_api_key' });
  });

  it.each([
    [['shop', 'create', '--name', 'X'], /--owner-email is required/],
    [['shop', 'create', '--name', 'X', '--owner-email', 'not-an-email'], /not an email/],
    [['shop', 'create', '--name', 'X', '--owner-email', 'a@b.co', '--timezone', 'Moon/Base'], /IANA/],
    [['shop', 'create', '--name', 'X', '--owner-email', 'a@b.co', '--colour', 'red'], /Unknown option/],
    [['key', 'create', '--shop', 'shop_01jd0000000000000000000000', '--scopes', 'all'], /No such shop/],
    [['key', 'create', '--shop', 'nonsense', '--scopes', 'all'], /No such shop/],
    [['key', 'revoke', '--key-id', 'key_01jd0000000000000000000000'], /No such key/],
    [['key', 'frobnicate'], /Unknown command/],
  ])('%j fails clearly', async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });

  it('simulates calls with jobs through the domain code', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'Sim', '--owner-email', 's@sim.co', '--trade', 'electrical', '--json')).out);
    const result = await cli('call', 'simulate', '--shop', shop.id, '--count', '3', '--with-job', '--json');
    expect(result.code).toBe(0);
    const calls = JSON.parse(result.out) as { call_id: string; job_ids: string[] }[];
    expect(calls).toHaveLength(3);
    const page = await deps.calls.list(shop.id, { limit: 10 });
    expect(page.items.map((c) => c.id)).toEqual(calls.map((c) => c.call_id).reverse());
    const job = await deps.jobs.get(shop.id, calls[0]?.job_ids[0] as string);
    expect(job).toMatchObject({ status: 'pending', urgency: 'routine' });
    const emergency = JSON.parse((await cli('call', 'simulate', '--shop', shop.id, '--emergency', '--json')).out);
    expect(await deps.jobs.get(shop.id, emergency[0].job_ids[0])).toMatchObject({ urgency: 'emergency' });
    expect((await cli('call', 'simulate', '--shop', shop.id, '--count', '0')).code).toBe(2);
  });

  it('lists endpoints (all, or only the failing ones) and re-enables one', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'Hooks', '--owner-email', 'h@hooks.co', '--json')).out);
    const make = (path: string) => createEndpoint(deps, shop.id, { url: `https://hooks.partner.example/${path}`, events: ['*'] });
    const healthy = await make('healthy');
    const broken = await make('broken');
    await deps.endpoints.update(shop.id, broken.id, { enabled: false, disabled_reason: 'failing', failing_since: '2026-11-01T00:00:00.000Z' }, new Date().toISOString());

    const all = JSON.parse((await cli('endpoint', 'list', '--shop', shop.id, '--json')).out) as { id: string }[];
    expect(all.map((e) => e.id).sort()).toEqual([healthy.id, broken.id].sort());
    const failing = await cli('endpoint', 'list', '--shop', shop.id, '--failing');
    expect(failing.code).toBe(0);
    expect(failing.out).toContain(broken.id);
    expect(failing.out).toContain('disabled (failing)');
    expect(failing.out).not.toContain(healthy.id);

    const enabled = await cli('endpoint', 'enable', '--shop', shop.id, '--id', broken.id, '--json');
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.out)).toMatchObject({ id: broken.id, enabled: true, disabled_reason: null, failing_since: null });
    expect((await cli('endpoint', 'list', '--shop', shop.id, '--failing')).out).toBe('No failing endpoints.');
    expect((await cli('endpoint', 'enable', '--shop', shop.id, '--id', 'we_01jd0000000000000000000000')).err).toMatch(/No such webhook endpoint/);
    expect((await cli('endpoint', 'list', '--shop', 'shop_01jd0000000000000000000000')).err).toMatch(/No such shop/);
  });

  it('shows an event with each delivery\'s attempt log', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'Events', '--owner-email', 'e@events.co', '--json')).out);
    const calls = JSON.parse((await cli('call', 'simulate', '--shop', shop.id, '--json')).out) as { event_ids: string[] }[];
    const eventId = calls[0]?.event_ids[0] as string;
    const event = await deps.events.get(shop.id, eventId);
    const row = newDelivery(event!, 'we_01jd0000000000000000000000', 'dlv_01jd0000000000000000000000', 'fanout', new Date());
    row.status = 'retrying';
    row.attempts = 1;
    row.history = [{ attempt: 1, at: '2026-11-21T18:04:05.123Z', status: 500, duration_ms: 42, error: 'HTTP 500', response_snippet: 'database\nlocked' }];
    await deps.deliveries.createAll([row]);

    const shown = await cli('event', 'show', eventId, '--shop', shop.id);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`${eventId}  call.completed`);
    expect(shown.out).toMatch(/dlv_01jd0000000000000000000000 → we_01jd0000000000000000000000 {2}retrying, 1 attempts/);
    expect(shown.out).toContain('#1 2026-11-21T18:04:05.123Z  HTTP 500  42 ms  HTTP 500  "database locked"');
    const json = JSON.parse((await cli('event', 'show', eventId, '--shop', shop.id, '--json')).out);
    expect(json.deliveries[0].attempt_log[0]).toMatchObject({ response_status: 500, response_snippet: 'database\nlocked' });
    expect((await cli('event', 'show', 'evt_01jd0000000000000000000000', '--shop', shop.id)).err).toMatch(/No such event/);
    expect((await cli('event', 'show', '--shop', shop.id)).err).toMatch(/exactly one event id/);
  });

  it('rejects unknown scopes', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'S', '--owner-email', 's@s.co', '--json')).out);
    const result = await cli('key', 'create', '--shop', shop.id, '--scopes', 'calls:read,calls:delete');
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/calls:delete/);
  });
});
