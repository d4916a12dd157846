import { issueKey } from '../../shared/domain/api-keys';
import { call, expectError, type HttpReply } from '../helpers/http';
import { startTestStack } from '../helpers/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-key rate limits (docs/api.md, Rate limits) through the local HTTP adapter', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    // The contract's defaults, not the generous ones the other tests run with.
    stack = await startTestStack({ rateLimits: undefined });
  });
  afterAll(() => stack.stop());

  it('runs with the contract defaults: 25/s for test keys, 100/s for live keys, bursts of twice that', () => {
    expect(stack.deps.rateLimits.test).toEqual({ perSecond: 25, burst: 50 });
    expect(stack.deps.rateLimits.live).toEqual({ perSecond: 100, burst: 200 });
  });

  it(
    'floods of 200 concurrent requests from one test key: some 429 rate_limited with ' +
      'Retry-After ≥ 1; another key meanwhile gets 200; after the wait the key works again',
    async () => {
      const noisy = stack.demo.writeKey.key;
      const { key: other } = await issueKey(stack.deps.apiKeys, {
        shopId: stack.demo.shop.id,
        scopes: ['settings:read'],
        write: false,
        mode: 'test',
      });
      const started = performance.now();
      const meanwhile = call(stack.url, 'GET', '/v1/me', { key: other });
      const replies: HttpReply[] = [];
      // A machine that answers slower than the bucket refills admits a whole flood: flood again.
      for (let round = 0; round < 5 && !replies.some((r) => r.status === 429); round++) {
        const flood = Array.from({ length: 200 }, () => call(stack.url, 'GET', '/v1/me', { key: noisy }));
        replies.push(...(await Promise.all(flood)));
      }
      const seconds = (performance.now() - started) / 1000;
      expect((await meanwhile).status).toBe(200);

      const limited = replies.filter((r) => r.status === 429);
      const ok = replies.filter((r) => r.status === 200);
      expect(limited.length + ok.length).toBe(replies.length);
      expect(limited.length).toBeGreaterThan(0);
      // The burst got through, and no more than the burst plus 25 per second of the flood.
      expect(ok.length).toBeGreaterThanOrEqual(50);
      expect(ok.length).toBeLessThanOrEqual(50 + Math.ceil(25 * seconds) + 1);
      let wait = 0;
      for (const reply of limited) {
        const error = expectError(reply, 429, 'rate_limited');
        expect(error.type).toBe('rate_limit_error');
        const retryAfter = reply.headers.get('retry-after') ?? '';
        expect(retryAfter).toMatch(/^[1-9]\d*$/);
        wait = Math.max(wait, Number(retryAfter));
      }

      await sleep(wait * 1000);
      const again: HttpReply = await call(stack.url, 'GET', '/v1/me', { key: noisy });
      expect(again.status).toBe(200);
    },
    120_000,
  );

  it(
    'a flood of unknown keys from one address is refused before ' +
      'any route runs once over its budget; valid keys are unaffected',
    async () => {
      const bad = Array.from({ length: 60 }, (_, i) =>
        fetch(`${stack.url}/v1/me`, { headers: { authorization: `Bearer sk_test_${String(i).padStart(40, 'Z')}` } }),
      );
      const statuses = await Promise.all(bad.map(async (p) => (await p).status));
      // Within the budget (10/s, burst 20) the contract's 401; past it, API Gateway's bare 403 with no route behind it.
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(20);
      expect(statuses.filter((s) => s === 403).length).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 401 || s === 403)).toBe(true);
      expect((await call(stack.url, 'GET', '/v1/me', { key: stack.demo.readKey.key })).status).toBe(200);
    },
  );
});
