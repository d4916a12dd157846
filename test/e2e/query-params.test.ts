import { call, expectError } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

describe('unknown query parameters through the local HTTP adapter', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.stop());

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'foo'])(
    'GET /v1/shop?%s=1 → 400 parameter_unknown naming it',
    async (name) => {
      const reply = await call(stack.url, 'GET', `/v1/shop?${name}=1`, { key: stack.demo.readKey.key });
      expect(expectError(reply, 400, 'parameter_unknown').param).toBe(name);
    },
  );

  it('GET /v1/calls?limit=5&__proto__=x → 400 too, and the known parameter alone is fine', async () => {
    expectError(
      await call(stack.url, 'GET', '/v1/calls?limit=5&__proto__=x', { key: stack.demo.readKey.key }),
      400,
      'parameter_unknown',
    );
    expect((await call(stack.url, 'GET', '/v1/calls?limit=5', { key: stack.demo.readKey.key })).status).toBe(200);
  });
});
