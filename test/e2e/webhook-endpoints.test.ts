import { issueKey } from '../../shared/domain/api-keys';
import { createShop } from '../../shared/domain/shop';
import { signingSecrets } from '../../shared/domain/webhook-endpoints';
import { logger } from '../../shared/logger';
import { SCOPES } from '../../shared/domain/scopes';
import { eventsOf } from '../helpers/events-in-table';
import { call, expectError } from '../helpers/http';
import { startTestStack } from '../helpers/stack';
import { HOSTILE_URLS } from '../helpers/hostile-urls';

describe('webhook endpoints over HTTP (cloud policy: https and public targets only)', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  let key: string;
  const create = (body: unknown, headers: Record<string, string> = {}, k = key) =>
    call(stack.url, 'POST', '/v1/webhook-endpoints', { key: k, body, headers });

  beforeAll(async () => {
    stack = await startTestStack({ allowInsecureWebhookTargets: false });
    key = stack.demo.writeKey.key;
  });
  afterAll(() => stack.stop());

  it('shows the secret at create and rotate only: not in list, patch, test, the table or the logs', async () => {
    const logged: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const spy = jest
      .spyOn(process.stdout, 'write')
      .mockImplementation((chunk: string | Uint8Array) => (logged.push(String(chunk)), true));
    logger.setLogLevel('DEBUG');
    try {
      const created = await create(
        { url: 'https://hooks.partner.example/in', events: ['call.completed', 'job.created'], description: 'CRM' },
        { 'idempotency-key': 'create-1' },
      );
      expect(created.status).toBe(201);
      const secret = created.json.secret as string;
      expect(secret).toMatch(/^whsec_/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
      expect(created.json).toMatchObject({
        object: 'webhook_endpoint',
        url: 'https://hooks.partner.example/in',
        events: ['call.completed', 'job.created'],
        enabled: true,
        disabled_reason: null,
        failing_since: null,
        description: 'CRM',
      });
      const id = created.json.id as string;

      const rotated = await call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/rotate-secret`, { key });
      expect(rotated.status).toBe(200);
      const newSecret = rotated.json.secret as string;
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(secret);

      const others = [
        await call(stack.url, 'GET', '/v1/webhook-endpoints', { key }),
        await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, { key, body: { description: 'CRM sync' } }),
        await call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/test`, { key }),
      ];
      for (const reply of others) {
        expect(reply.status).toBeLessThan(300);
        expect(reply.text).not.toContain('whsec_');
        expect(reply.text).not.toContain('secret');
      }
      const deps = stack.deps;
      const table = JSON.stringify((await deps.db.doc.scan({ TableName: deps.db.tableName })).Items);
      for (const s of [secret, newSecret]) {
        expect(table).not.toContain(s);
        expect(table).not.toContain(s.slice(6));
        expect(logged.join('')).not.toContain(s.slice(6));
      }
      expect(JSON.stringify(await eventsOf(deps, stack.demo.shop.id))).not.toContain('whsec_');
    } finally {
      logger.setLogLevel('SILENT');
      spy.mockRestore();
      void write;
    }
  });

  it('create with the same Idempotency-Key twice → one endpoint, identical responses', async () => {
    const shop = await createShop(stack.deps, { name: 'Idem Hooks', owner_email: 'o@hooks.test' });
    const { key: k } = await issueKey(stack.deps.apiKeys, {
      shopId: shop.id,
      scopes: [...SCOPES],
      write: true,
      mode: 'test',
    });
    const body = { url: 'https://hooks.partner.example/idem', events: ['*'] };
    const first = await create(body, { 'idempotency-key': 'same' }, k);
    const second = await create(body, { 'idempotency-key': 'same' }, k);
    expect([first.status, second.status, second.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect(second.text).toBe(first.text);
    expect((await call(stack.url, 'GET', '/v1/webhook-endpoints', { key: k })).json.data).toHaveLength(1);
  });

  it('a replayed create never hands out a secret that is dead or to another key: 404 after DELETE, 409 after a rotation, 422 for another key', async () => {
    const shop = await createShop(stack.deps, { name: 'Replay Hooks', owner_email: 'o@replay.test' });
    const issue = async () =>
      (await issueKey(stack.deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: true, mode: 'test' })).key;
    const [k, colleague] = [await issue(), await issue()];
    const body = (n: string) => ({ url: `https://hooks.partner.example/replay-${n}`, events: ['*'] });
    const idem = (n: string) => ({ 'idempotency-key': `replay-${n}` });
    const noSecret = (reply: { text: string }) => expect(reply.text).not.toContain('whsec_');

    const deleted = await create(body('deleted'), idem('deleted'), k);
    expect(
      (await call(stack.url, 'DELETE', `/v1/webhook-endpoints/${deleted.json.id as string}`, { key: k })).status,
    ).toBe(200);
    const afterDelete = await create(body('deleted'), idem('deleted'), k);
    expect(expectError(afterDelete, 404, 'resource_missing').message).toContain(deleted.json.id as string);
    noSecret(afterDelete);

    const rotated = await create(body('rotated'), idem('rotated'), k);
    expect(
      (await call(stack.url, 'POST', `/v1/webhook-endpoints/${rotated.json.id as string}/rotate-secret`, { key: k }))
        .status,
    ).toBe(200);
    const afterRotation = await create(body('rotated'), idem('rotated'), k);
    expectError(afterRotation, 409, 'invalid_state');
    noSecret(afterRotation);

    const live = await create(body('live'), idem('live'), k);
    const fromColleague = await create(body('live'), idem('live'), colleague);
    expectError(fromColleague, 422, 'idempotency_key_reused');
    noSecret(fromColleague);
    const fromMaker = await create(body('live'), idem('live'), k);
    expect([fromMaker.status, fromMaker.headers.get('idempotent-replayed'), fromMaker.text]).toEqual([
      201,
      'true',
      live.text,
    ]);
    // Nothing was created twice: the two that remain are the rotated one and the live one.
    expect(
      ((await call(stack.url, 'GET', '/v1/webhook-endpoints', { key: k })).json.data as { id: string }[])
        .map((e) => e.id)
        .sort(),
    ).toEqual([rotated.json.id, live.json.id].sort());
  });

  it('a double rotate leaves the first secret signing: every secret of the last 24 h signs, at most 3, newest first', async () => {
    const created = await create({ url: 'https://hooks.partner.example/rot', events: ['job.created'] });
    const id = created.json.id as string;
    const rotate = () => call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/rotate-secret`, { key });
    const r1 = await rotate();
    const r2 = await rotate();
    const deps = stack.deps;
    const read = async () => (await deps.endpoints.get(stack.demo.shop.id, id))!;
    // The receiver still on the created secret keeps verifying after two rotations.
    expect(await signingSecrets(deps, await read(), new Date())).toEqual([
      r2.json.secret,
      r1.json.secret,
      created.json.secret,
    ]);
    const afterGrace = new Date(Date.now() + 24 * 60 * 60 * 1000 + 1000);
    expect(await signingSecrets(deps, await read(), afterGrace)).toEqual([r2.json.secret]);
    // A fourth secret within the 24 h retires the oldest.
    const r3 = await rotate();
    expect(await signingSecrets(deps, await read(), new Date())).toEqual([
      r3.json.secret,
      r2.json.secret,
      r1.json.secret,
    ]);
  });

  it('a rotate replayed with its Idempotency-Key rotates once and answers the same secret, until rotated again', async () => {
    const created = await create({ url: 'https://hooks.partner.example/rot-idem', events: ['job.created'] });
    const id = created.json.id as string;
    const rotate = (idempotencyKey: string) =>
      call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/rotate-secret`, {
        key,
        headers: { 'Idempotency-Key': idempotencyKey },
      });
    const first = await rotate('rot-1');
    const replay = await rotate('rot-1');
    expect([first.status, replay.status, replay.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true']);
    expect(replay.json.secret).toBe(first.json.secret);
    const endpoint = (await stack.deps.endpoints.get(stack.demo.shop.id, id))!;
    expect(await signingSecrets(stack.deps, endpoint, new Date())).toEqual([first.json.secret, created.json.secret]);
    // Rotated again since: the replay no longer hands out a secret on its way out.
    expect((await rotate('rot-2')).status).toBe(200);
    expect(expectError(await rotate('rot-1'), 409, 'invalid_state').message).toMatch(/rotated since/);
  });

  it('a 17th endpoint → 400', async () => {
    const shop = await createShop(stack.deps, { name: 'Many Hooks', owner_email: 'o@many.test' });
    const { key: k } = await issueKey(stack.deps.apiKeys, {
      shopId: shop.id,
      scopes: ['webhooks:write'],
      write: true,
      mode: 'test',
    });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create({ url: `https://hooks.partner.example/${i}`, events: ['*'] }, {}, k)),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(16);
    for (const r of replies.filter((r) => r.status !== 201))
      expect(expectError(r, 400, 'parameter_invalid').message).toMatch(/16/);
    expect((await call(stack.url, 'GET', '/v1/webhook-endpoints', { key: k })).json.data).toHaveLength(16);
  });

  it.each([
    [{ url: 'https://hooks.partner.example/a', events: [] }, 'events'],
    [{ url: 'https://hooks.partner.example/a', events: ['call.created'] }, 'events.0'],
    [{ url: 'https://hooks.partner.example/a', events: ['job.created', 'webhook_endpoint.test'] }, 'events.1'],
    [{ url: 'https://hooks.partner.example/a', events: 'job.created' }, 'events'],
    [{ url: 'https://hooks.partner.example/a' }, 'events'],
    [{ events: ['*'] }, 'url'],
    [{ url: 'https://hooks.partner.example/a', events: ['*'], secret: 'whsec_mine' }, 'secret'],
    // JSON.stringify sends a lone surrogate as its escape ("\ud800"), as a client would.
    [{ url: 'https://hooks.partner.example/a', events: ['*'], description: 'CRM \ud800' }, 'description'],
    [{ url: 'https://hooks.partner.example/a', events: ['*'], description: 'CRM\u0000sync' }, 'description'],
    [{ url: 'https://hooks.partner.example/a\udfff', events: ['*'] }, 'url'],
  ])('create %j → 400 with param %s', async (body, param) => {
    const reply = await create(body);
    expect(reply.status).toBe(400);
    expect((reply.json.error as Record<string, unknown>).param).toBe(param);
  });

  it(`refuses ${HOSTILE_URLS.length} hostile URL forms on create and on update`, async () => {
    const created = await create({ url: 'https://hooks.partner.example/ok', events: ['*'] });
    const id = created.json.id as string;
    for (const url of HOSTILE_URLS) {
      expect(expectError(await create({ url, events: ['*'] }), 400, 'parameter_invalid').param).toBe('url');
      expect(
        expectError(
          await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, { key, body: { url } }),
          400,
          'parameter_invalid',
        ).param,
      ).toBe('url');
    }
    expect((await call(stack.url, 'GET', '/v1/webhook-endpoints', { key })).text).not.toContain('127.0.0.1');
  });

  it('PATCH disables, re-enables (clearing the failure state) and changes events', async () => {
    const id = (await create({ url: 'https://hooks.partner.example/p', events: ['job.created'] })).json.id as string;
    const disabled = await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, { key, body: { enabled: false } });
    expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: 'manual' });
    await stack.deps.endpoints.update(
      stack.demo.shop.id,
      id,
      { disabled_reason: 'failing', failing_since: '2026-11-01T00:00:00.000Z' },
      new Date().toISOString(),
    );
    const enabled = await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, {
      key,
      body: { enabled: true, events: ['job.approved', 'job.approved'] },
    });
    expect(enabled.json).toMatchObject({
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      events: ['job.approved'],
    });
    expectError(
      await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, { key, body: { enabled: 'yes' } }),
      400,
      'parameter_invalid',
    );
  });

  it('test queues a webhook_endpoint.test event for that endpoint → 202', async () => {
    const id = (await create({ url: 'https://hooks.partner.example/t', events: ['job.created'] })).json.id as string;
    const reply = await call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/test`, { key });
    expect(reply.status).toBe(202);
    expect(reply.json).toMatchObject({ object: 'event', type: 'webhook_endpoint.test', data: { endpoint_id: id } });
    const stored = (await eventsOf(stack.deps, stack.demo.shop.id)).find((e) => e.id === reply.json.id);
    expect(stored).toMatchObject({ endpoint_id: id, type: 'webhook_endpoint.test' });
  });

  it('foreign or unknown endpoint ids → 404', async () => {
    const shop = await createShop(stack.deps, { name: 'Foreign Hooks', owner_email: 'o@foreign.test' });
    const { key: k } = await issueKey(stack.deps.apiKeys, {
      shopId: shop.id,
      scopes: ['webhooks:write'],
      write: true,
      mode: 'test',
    });
    const foreign = (await create({ url: 'https://hooks.partner.example/f', events: ['*'] }, {}, k)).json.id as string;
    for (const id of [foreign, 'we_01jd0000000000000000000000', 'we_nope', 'job_01jd0000000000000000000000']) {
      expectError(
        await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, { key, body: { enabled: false } }),
        404,
        'resource_missing',
      );
      expectError(
        await call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/rotate-secret`, { key }),
        404,
        'resource_missing',
      );
      expectError(await call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/test`, { key }), 404, 'resource_missing');
    }
  });
});

describe('webhook endpoints with the local-stack setting on', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack({ allowInsecureWebhookTargets: true });
  });
  afterAll(() => stack.stop());

  it('accepts http:// and loopback receivers, and still refuses private and metadata targets', async () => {
    const key = stack.demo.writeKey.key;
    for (const url of ['http://127.0.0.1:4000/hook', 'http://localhost:4000/hook', 'https://[::1]:4000/hook']) {
      expect(
        (await call(stack.url, 'POST', '/v1/webhook-endpoints', { key, body: { url, events: ['*'] } })).status,
      ).toBe(201);
    }
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest',
      'https://192.168.0.10/hook',
      'https://user:pw@localhost/hook',
    ]) {
      expectError(
        await call(stack.url, 'POST', '/v1/webhook-endpoints', { key, body: { url, events: ['*'] } }),
        400,
        'parameter_invalid',
      );
    }
  });
});
