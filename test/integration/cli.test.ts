import { COMMANDS, runCli } from '../../lib/cli/run';
import { authenticate, hashKey } from '../../shared/domain/api-keys';
import { createPortalSession, lookUpSession } from '../../shared/domain/portal-sessions';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { newDelivery, fanOutDeliveryId } from '../../shared/delivery/fan-out';
import { createEndpoint } from '../../shared/domain/webhook-endpoints';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
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
    const shop = await cli(
      'shop',
      'create',
      '--name',
      'CLI Heating',
      '--owner-email',
      'o@cli.test',
      '--timezone',
      'America/Denver',
      '--trade',
      'hvac',
      '--json',
    );
    expect(shop.code).toBe(0);
    const shopJson = JSON.parse(shop.out);
    expect(shopJson).toMatchObject({ object: 'shop', name: 'CLI Heating', timezone: 'America/Denver', trade: 'hvac' });

    const created = await cli(
      'key',
      'create',
      '--shop',
      shopJson.id,
      '--scopes',
      'calls:read,jobs:read',
      '--mode',
      'live',
      '--json',
    );
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^sk_live_/),
      shop_id: shopJson.id,
      scopes: ['calls:read', 'jobs:read'],
      write: false,
      mode: 'live',
    });
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
    [['key', 'frobnicate'], /Unknown command 'key frobnicate'/],
    [['frobnicate'], /Unknown command 'frobnicate'/],
    [['key', 'create', '--shop', 'x', '--colour', 'red'], /Unknown option '--colour'.*key create --help/],
    [['key', 'list'], /--shop is required/],
    [['trigger'], /Name an event type/],
    [['trigger', 'call.exploded'], /Unknown event type 'call.exploded'/],
    [['trigger', 'call.completed', 'job.created'], /Unexpected argument 'job.created'/],
    [['key'], /Usage: npm run cli -- key <create\|list\|revoke>/],
    [['portal'], /Usage: npm run cli -- portal <open\|list\|revoke>/],
    [['portal', 'list'], /--shop is required/],
    [['portal', 'revoke', '--shop', 'shop_01jd0000000000000000000000', '--all'], /No such shop/],
  ])('%j fails clearly', async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });

  it("portal open prints a portal link whose token works (read-only, for the time asked), against the target's API URL", async () => {
    const shop = JSON.parse(
      (await cli('shop', 'create', '--name', 'Portal Plumbing', '--owner-email', 'p@p.co', '--json')).out,
    );
    const out: string[] = [];
    const code = await runCli(
      ['portal', 'open', '--shop', shop.id, '--read-only', '--expires-in', '600', '--json'],
      () => deps,
      { out: (l) => out.push(l), err: (l) => out.push(l), apiUrl: 'http://127.0.0.1:3300' },
    );
    expect(code).toBe(0);
    const session = JSON.parse(out.join('\n'));
    expect(session).toMatchObject({
      object: 'portal_session',
      read_only: true,
      url: `http://127.0.0.1:3300/portal#token=${session.token}`,
    });
    expect(Date.parse(session.expires_at) - Date.parse(session.created_at)).toBe(600_000);
    expect(await lookUpSession(deps, hashKey(session.token), Date.now())).toMatchObject({
      ok: true,
      principal: { shopId: shop.id, scopes: ['webhooks:read'], session: { shopName: 'Portal Plumbing' } },
    });

    const text: string[] = [];
    await runCli(['portal', 'open', '--shop', shop.id, '--api-url', 'https://api.example.test/base'], () => deps, {
      out: (l) => text.push(l),
      err: (l) => text.push(l),
    });
    expect(text.join('\n')).toMatch(
      /^Portal link for Portal Plumbing .*\nhttps:\/\/api\.example\.test\/base\/portal#token=pst_[0-9A-Za-z]{40}\n/,
    );

    for (const [argv, message] of [
      [['--expires-in', '30'], /60 to 86400/],
      [['--mode', 'prod'], /--mode must be test or live/],
      [['--api-url', 'ftp://x'], /not an http/],
    ] as const) {
      const result = await cli('portal', 'open', '--shop', shop.id, '--api-url', 'http://127.0.0.1:3000', ...argv);
      expect([result.code, result.err]).toEqual([2, expect.stringMatching(message)]);
    }
    expect((await cli('portal', 'open', '--shop', shop.id)).err).toMatch(/--api-url is required/);
  });

  it("portal list shows a shop's live sessions (never a token) and portal revoke ends one, or all, at once; key revoke ends a key's", async () => {
    const shop = JSON.parse(
      (await cli('shop', 'create', '--name', 'Links Ltd', '--owner-email', 'l@l.co', '--json')).out,
    );
    const open = async (...argv: string[]) => {
      const out: string[] = [];
      await runCli(['portal', 'open', '--shop', shop.id, '--json', ...argv], () => deps, {
        out: (l) => out.push(l),
        err: (l) => out.push(l),
        apiUrl: 'http://127.0.0.1:3300',
      });
      return JSON.parse(out.join('\n')) as { id: string; token: string; created_at: string; expires_at: string };
    };
    const works = async (token: string) => (await lookUpSession(deps, hashKey(token), Date.now())).ok;
    const first = await open('--read-only');
    const second = await open();
    const key = JSON.parse(
      (await cli('key', 'create', '--shop', shop.id, '--scopes', 'webhooks:write', '--write', '--json')).out,
    );
    const byKey = await createPortalSession(
      deps,
      { shopId: shop.id, mode: 'test', key: { id: key.id, hash: hashKey(key.key) } },
      {},
      'http://127.0.0.1:3300',
    );

    const listed = await cli('portal', 'list', '--shop', shop.id, '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      expect.objectContaining({ id: byKey.id, read_only: false, created_by: key.id }),
      {
        object: 'portal_session',
        id: second.id,
        read_only: false,
        expires_at: second.expires_at,
        created_at: second.created_at,
        created_by: null,
      },
      expect.objectContaining({ id: first.id, read_only: true, created_by: null }),
    ]);
    expect(listed.out).not.toMatch(/pst_|token/);
    expect((await cli('portal', 'list', '--shop', shop.id)).out.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${byKey.id}  full  until .* by ${key.id}$`)),
      expect.stringMatching(new RegExp(`^${second.id}  full  until ${second.expires_at}  created .* by an operator$`)),
      expect.stringMatching(new RegExp(`^${first.id}  read-only  until `)),
    ]);

    // A key's revocation ends its sessions (the operator's links live on).
    expect((await cli('key', 'revoke', '--key-id', key.id)).code).toBe(0);
    expect(await works(byKey.token)).toBe(false);
    expect(
      JSON.parse((await cli('portal', 'list', '--shop', shop.id, '--json')).out).map((s: { id: string }) => s.id),
    ).toEqual([second.id, first.id]);

    expect(await cli('portal', 'revoke', '--shop', shop.id, '--id', first.id)).toEqual({
      code: 0,
      out: `Revoked portal session ${first.id}`,
      err: '',
    });
    expect([await works(first.token), await works(second.token)]).toEqual([false, true]);
    const again = await cli('portal', 'revoke', '--shop', shop.id, '--id', first.id);
    expect([again.code, again.err]).toEqual([2, `Error: No such portal session: ${first.id}`]);
    for (const argv of [[], ['--id', second.id, '--all']]) {
      const result = await cli('portal', 'revoke', '--shop', shop.id, ...argv);
      expect([result.code, result.err]).toEqual([2, 'Error: Name one session with --id, or pass --all']);
    }

    const third = await open();
    expect(JSON.parse((await cli('portal', 'revoke', '--shop', shop.id, '--all', '--json')).out)).toEqual({
      shop_id: shop.id,
      revoked: [third.id, second.id],
    });
    expect([await works(second.token), await works(third.token)]).toEqual([false, false]);
    expect((await cli('portal', 'list', '--shop', shop.id)).out).toBe(`Shop ${shop.id} has no live portal sessions.`);
    expect((await cli('portal', 'revoke', '--shop', shop.id, '--all')).out).toBe(
      `Shop ${shop.id} had no live portal sessions.`,
    );
  });

  it('simulates calls with jobs through the domain code', async () => {
    const shop = JSON.parse(
      (await cli('shop', 'create', '--name', 'Sim', '--owner-email', 's@sim.co', '--trade', 'electrical', '--json'))
        .out,
    );
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
    const shop = JSON.parse(
      (await cli('shop', 'create', '--name', 'Hooks', '--owner-email', 'h@hooks.co', '--json')).out,
    );
    const make = (path: string) =>
      createEndpoint(deps, shop.id, { url: `https://hooks.partner.example/${path}`, events: ['*'] });
    const healthy = await make('healthy');
    const broken = await make('broken');
    await deps.endpoints.update(
      shop.id,
      broken.id,
      { enabled: false, disabled_reason: 'failing', failing_since: '2026-11-01T00:00:00.000Z' },
      new Date().toISOString(),
    );

    const all = JSON.parse((await cli('endpoint', 'list', '--shop', shop.id, '--json')).out) as { id: string }[];
    expect(all.map((e) => e.id).sort()).toEqual([healthy.id, broken.id].sort());
    const failing = await cli('endpoint', 'list', '--shop', shop.id, '--failing');
    expect(failing.code).toBe(0);
    expect(failing.out).toContain(broken.id);
    expect(failing.out).toContain('disabled (failing)');
    expect(failing.out).not.toContain(healthy.id);

    const enabled = await cli('endpoint', 'enable', '--shop', shop.id, '--id', broken.id, '--json');
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.out)).toMatchObject({
      id: broken.id,
      enabled: true,
      disabled_reason: null,
      failing_since: null,
    });
    expect((await cli('endpoint', 'list', '--shop', shop.id, '--failing')).out).toBe('No failing endpoints.');
    expect((await cli('endpoint', 'enable', '--shop', shop.id, '--id', 'we_01jd0000000000000000000000')).err).toMatch(
      /No such webhook endpoint/,
    );
    expect((await cli('endpoint', 'list', '--shop', 'shop_01jd0000000000000000000000')).err).toMatch(/No such shop/);
  });

  it("shows an event with each delivery's attempt log", async () => {
    const shop = JSON.parse(
      (await cli('shop', 'create', '--name', 'Events', '--owner-email', 'e@events.co', '--json')).out,
    );
    const calls = JSON.parse((await cli('call', 'simulate', '--shop', shop.id, '--json')).out) as {
      event_ids: string[];
    }[];
    const eventId = calls[0]?.event_ids[0] as string;
    const event = await deps.events.get(shop.id, eventId);
    // Made after the event, by the table alone (no stream here): the row stands for the fan-out's.
    const endpoint = await createEndpoint(deps, shop.id, {
      url: 'https://hooks.partner.example/events',
      events: ['*'],
    });
    const row = newDelivery(event!, {
      id: fanOutDeliveryId(eventId, endpoint.id),
      endpointId: endpoint.id,
      origin: 'fanout',
      now: new Date(),
    });
    row.status = 'retrying';
    row.attempts = 1;
    row.history = [
      {
        attempt: 1,
        at: '2026-11-21T18:04:05.123Z',
        status: 500,
        duration_ms: 42,
        error: 'HTTP 500',
        response_snippet: 'database\nlocked',
      },
    ];
    await new DynamoDeliveryStore(deps.db).createAll([row]);

    const shown = await cli('event', 'show', eventId, '--shop', shop.id);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`${eventId}  call.completed`);
    expect(shown.out).toContain(`${row.id} → ${endpoint.id}  retrying, 1 attempts`);
    expect(shown.out).toContain('#1 2026-11-21T18:04:05.123Z  HTTP 500  42 ms  HTTP 500  "database locked"');
    const json = JSON.parse((await cli('event', 'show', eventId, '--shop', shop.id, '--json')).out);
    expect(json.deliveries[0].attempt_log[0]).toMatchObject({
      response_status: 500,
      response_snippet: 'database\nlocked',
    });
    expect((await cli('event', 'show', 'evt_01jd0000000000000000000000', '--shop', shop.id)).err).toMatch(
      /No such event/,
    );
    expect((await cli('event', 'show', '--shop', shop.id)).err).toMatch(/exactly one event id/);
  });

  it('issues a read-only webhooks key with --scopes webhooks:read', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'Dash', '--owner-email', 'd@d.co', '--json')).out);
    const created = JSON.parse(
      (await cli('key', 'create', '--shop', shop.id, '--scopes', 'webhooks:read', '--json')).out,
    );
    expect(created).toMatchObject({ scopes: ['webhooks:read'], write: false });
    expect(await authenticate(deps.apiKeys, `Bearer ${created.key}`)).toMatchObject({
      ok: true,
      principal: { scopes: ['webhooks:read'] },
    });
  });

  it('rejects unknown scopes', async () => {
    const shop = JSON.parse((await cli('shop', 'create', '--name', 'S', '--owner-email', 's@s.co', '--json')).out);
    const result = await cli('key', 'create', '--shop', shop.id, '--scopes', 'calls:read,calls:delete');
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/calls:delete/);
  });

  it.each(COMMANDS.map((c) => [c.name]))(
    '`%s --help` prints its usage and exits 0 without touching the table',
    async (name) => {
      const touched = jest.fn();
      for (const flag of ['--help', '-h']) {
        const out: string[] = [];
        const code = await runCli([...name.split(' '), '--bogus', flag], () => (touched(), deps), {
          out: (l) => out.push(l),
          err: (l) => out.push(l),
        });
        expect(code).toBe(0);
        expect(out.join('\n')).toContain(`Usage: npm run cli -- ${name} `);
      }
      expect((await cli('help', ...name.split(' '))).out).toContain(`Usage: npm run cli -- ${name} `);
      expect(touched).not.toHaveBeenCalled();
    },
  );

  it('lists every command in the general help, and a group on `shop --help`', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    for (const c of COMMANDS) expect(help.out).toContain(c.name);
    expect(help.out).toMatch(/Exit codes: 0 .* 1 .* 2 /);
    expect((await cli()).code).toBe(2);
    const group = await cli('shop', '--help');
    expect(group.code).toBe(0);
    expect(group.out).toContain('shop create');
    expect(group.out).toContain('shop list');
    expect(group.out).not.toContain('key create');
  });

  it("lists shops oldest first and a shop's keys without the keys themselves", async () => {
    const a = JSON.parse((await cli('shop', 'create', '--name', 'List A', '--owner-email', 'a@list.co', '--json')).out);
    const b = JSON.parse((await cli('shop', 'create', '--name', 'List B', '--owner-email', 'b@list.co', '--json')).out);
    const shops = await cli('shop', 'list', '--json');
    expect(shops.code).toBe(0);
    const ids = (JSON.parse(shops.out) as { id: string }[]).map((s) => s.id);
    expect(ids.indexOf(a.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
    expect((await cli('shop', 'list')).out).toMatch(new RegExp(`${a.id}\\s+List A`));

    const write = JSON.parse((await cli('key', 'create', '--shop', a.id, '--scopes', 'all', '--write', '--json')).out);
    const read = JSON.parse((await cli('key', 'create', '--shop', a.id, '--scopes', 'calls:read', '--json')).out);
    await cli('key', 'create', '--shop', b.id, '--scopes', 'all', '--json');
    await cli('key', 'revoke', '--key-id', read.id);
    const listed = await cli('key', 'list', '--shop', a.id, '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      expect.objectContaining({ id: write.id, write: true, revoked: false, mode: 'test' }),
      expect.objectContaining({ id: read.id, write: false, revoked: true, scopes: ['calls:read'] }),
    ]);
    expect(listed.out).not.toContain('sk_test_');
    expect(listed.out).not.toContain('key_hash');
    expect((await cli('key', 'list', '--shop', b.id)).out.split('\n')).toHaveLength(1);
  });

  it.each([
    ['call.completed', ['call.completed']],
    ['job.created', ['call.completed', 'job.created']],
    ['job.approved', ['call.completed', 'job.created', 'job.approved']],
    ['job.declined', ['call.completed', 'job.created', 'job.declined']],
    ['webhook_endpoint.disabled', ['webhook_endpoint.disabled']],
  ])('trigger %s writes that event through the domain code', async (type, types) => {
    const shop = JSON.parse(
      (await cli('shop', 'create', '--name', 'Trigger', '--owner-email', 't@t.co', '--json')).out,
    );
    const result = await cli('trigger', type, '--shop', shop.id, '--json');
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.out) as { event_id: string; event_ids: string[] };
    const events = (await deps.events.list(shop.id, { limit: 10 })).items;
    expect(events.map((e) => e.type).sort()).toEqual([...types].sort());
    expect(events.find((e) => e.id === out.event_id)?.type).toBe(type);
    expect(out.event_ids.sort()).toEqual(events.map((e) => e.id).sort());
    if (type === 'webhook_endpoint.disabled') {
      // The fixture endpoint is reused: a second trigger re-enables and disables the same one.
      expect((await cli('trigger', type, '--shop', shop.id)).code).toBe(0);
      const endpoints = await deps.endpoints.list(shop.id);
      expect(endpoints).toHaveLength(1);
      expect(endpoints[0]).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    }
  });
});
