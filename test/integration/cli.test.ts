import { runCli } from '../../lib/cli/run';
import { authenticate } from '../../shared/domain/api-keys';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
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

  it('rejects unknown scopes', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'S', '--owner-email', 's@s.co', '--json')).out);
    const result = await cli('key', 'create', '--shop', shop.id, '--scopes', 'calls:read,calls:delete');
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/calls:delete/);
  });
});
