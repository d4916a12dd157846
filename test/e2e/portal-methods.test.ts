import { startTestStack } from '../helpers/stack';

describe("the portal's methods (local adapter, as API Gateway routes them)", () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.stop());

  it('HEAD /portal and HEAD /portal/app.js answer as GET does, without a body', async () => {
    for (const path of ['/portal', '/portal/app.js']) {
      const [get, head] = [await fetch(`${stack.url}${path}`), await fetch(`${stack.url}${path}`, { method: 'HEAD' })];
      expect([head.status, head.headers.get('content-type'), head.headers.get('content-security-policy')]).toEqual([
        200,
        get.headers.get('content-type'),
        get.headers.get('content-security-policy'),
      ]);
      expect(head.headers.get('request-id')).toMatch(/^req_/);
      expect(await head.text()).toBe('');
      expect((await get.text()).length).toBeGreaterThan(0);
    }
  });

  it.each([
    ['POST', '/portal'],
    ['PUT', '/portal'],
    ['DELETE', '/portal/app.js'],
    ['PATCH', '/portal/nothing.js'],
  ])('%s %s: 405 method_not_allowed with Allow: GET, HEAD', async (method, path) => {
    const res = await fetch(`${stack.url}${path}`, { method });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const { error } = (await res.json()) as { error: { code: string; request_id: string } };
    expect(error).toMatchObject({ code: 'method_not_allowed', request_id: res.headers.get('request-id') });
  });
});
