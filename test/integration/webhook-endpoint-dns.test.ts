import { makeHandler as makeCreate } from '../../functions/api/create-webhook-endpoint';
import { makeHandler as makeUpdate } from '../../functions/api/update-webhook-endpoint';
import { createShop } from '../../shared/domain/shop';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { checkUrl, type Resolver } from '../../shared/delivery/url-guard';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { useFreshTable } from '../helpers/table';

/** DNS is injected: a stub answers, nothing reaches the network. */
const stubResolver: Resolver = async (host) => {
  const table: Record<string, string[]> = {
    'intranet.partner.test': ['10.20.30.40'],
    'public.partner.test': ['93.184.216.34'],
  };
  if (!table[host]) throw new Error('ENOTFOUND');
  return table[host];
};

describe('a name that resolves to a private address (DNS stub)', () => {
  let deps: Deps;
  let me: ReturnType<typeof principal>;
  beforeAll(async () => {
    const real = await useFreshTable();
    deps = Object.create(real, {
      checkUrl: { value: (url: string, policy: Deps['policy']) => checkUrl(url, policy, stubResolver) },
    });
    const shop = await createShop(real, { name: 'DNS Shop', owner_email: 'o@dns.test' });
    me = principal({ shopId: shop.id });
  });

  it('is refused on create and on update', async () => {
    const create = makeCreate(() => deps);
    const update = makeUpdate(() => deps);
    const send = (
      h: typeof create,
      method: string,
      path: string,
      body: object,
      pathParameters?: Record<string, string>,
    ) => h(apiEvent({ method, path, body: JSON.stringify(body), principal: me, pathParameters }), context());

    const refused = await send(create, 'POST', '/v1/webhook-endpoints', {
      url: 'https://intranet.partner.test/hook',
      events: ['*'],
    });
    expect(refused.statusCode).toBe(400);
    expect(parseBody(refused).error).toMatchObject({
      code: 'parameter_invalid',
      param: 'url',
      message: expect.stringContaining('10.20.30.40'),
    });

    const ok = await send(create, 'POST', '/v1/webhook-endpoints', {
      url: 'https://public.partner.test/hook',
      events: ['*'],
    });
    expect(ok.statusCode).toBe(201);
    const id = parseBody(ok).id as string;
    const patched = await send(
      update,
      'PATCH',
      `/v1/webhook-endpoints/${id}`,
      { url: 'https://intranet.partner.test/hook' },
      { id },
    );
    expect([patched.statusCode, (parseBody(patched).error as Record<string, unknown>).param]).toEqual([400, 'url']);
    expect((await deps.endpoints.get(me.shopId, id))?.url).toBe('https://public.partner.test/hook');
  });
});
