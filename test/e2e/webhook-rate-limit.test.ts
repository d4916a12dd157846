import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { call, expectError } from '../helpers/http';
import { closeReceivers, expectRequests, firstOfEach, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;

/** A shop of its own with a write key, so tests on one stack never see each other's endpoints. */
async function newTenant(stack: Stack) {
  const shop = await createShop(stack.deps, { name: 'Rate Shop', owner_email: 'owner@rate.test' });
  const { key } = await issueKey(stack.deps.apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  const api = (method: string, path: string, body?: unknown) => call(stack.url, method, path, { key, body });
  const simulate = async () =>
    (await ingestCall(stack.deps, simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() })))
      .event_ids[0] as string;
  return { shop, api, simulate };
}

/** The most starts in any one-second window [s, s + 1000 ms), sliding over every start. */
const mostInOneSecond = (times: number[]) =>
  Math.max(0, ...times.map((s) => times.filter((t) => t >= s && t < s + 1000).length));

describe('per-endpoint rate limit', () => {
  let stack: Stack;
  beforeAll(async () => {
    // Its start grace covers the admission's write: on an emulator of its own, the write is as quick late in the run.
    stack = await startTestStack({ ownEmulator: true });
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it(
    'a rate_limit: 2 endpoint receives 20 events with never more than 2 started ' +
      'in any one-second window, and all 20 arrive, each on its first attempt',
    async () => {
      const t = await newTenant(stack);
      const secrets: string[] = [];
      const receiver = await startReceiver(() => secrets);
      const made = await t.api('POST', '/v1/webhook-endpoints', {
        url: receiver.url,
        events: ['call.completed'],
        rate_limit: 2,
      });
      expect(made.status).toBe(201);
      expect(made.json.rate_limit).toBe(2);
      secrets.push(made.json.secret as string);

      const sent = await Promise.all(Array.from({ length: 20 }, () => t.simulate()));
      await waitFor(
        () => new Set(receiver.received.map((r) => r.event.id)).size >= 20,
        80_000,
        '20 rate-limited deliveries',
      );
      await new Promise((r) => setTimeout(r, 500)); // nothing more comes (no duplicate sends on a calm stack)
      expect(
        firstOfEach(receiver.received)
          .map((r) => r.event.id)
          .sort(),
      ).toEqual([...sent].sort());
      expectRequests(receiver.received, 20, stack);
      const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
      // Paced, not trickled: 20 at 2 per second take about 10 s alone, up to 30 s on a machine busy
      // enough that starts miss their grace and ask for a longer one; a trickle, each wait a retry
      // offset of a minute or more, would take many minutes.
      expect((times.at(-1) as number) - (times[0] as number)).toBeLessThan(60_000);

      // Waiting used no attempt and counted no failure.
      const deliveries = (await t.api('GET', `/v1/webhook-endpoints/${made.json.id as string}/deliveries?limit=100`))
        .json.data as { status: string; attempts: number; attempt_log: { at: string }[] }[];
      expect(deliveries).toHaveLength(20);
      expect(deliveries.every((d) => d.status === 'succeeded' && d.attempts === 1)).toBe(true);
      // The limit bounds starts, as the sender records them; arrivals at the receiver add the network's jitter.
      expect(mostInOneSecond(deliveries.map((d) => Date.parse(d.attempt_log[0]?.at ?? '')))).toBe(2);
      const endpoint = await t.api('GET', `/v1/webhook-endpoints/${made.json.id as string}`);
      expect(endpoint.json.health).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
      expect(receiver.rejected).toEqual([]);
    },
    120_000,
  );

  it(
    'a raised rate_limit reaches the deliveries waiting for ' +
      'the old one, and a new event does not queue behind them',
    async () => {
      const t = await newTenant(stack);
      const secrets: string[] = [];
      const receiver = await startReceiver(() => secrets);
      const made = await t.api('POST', '/v1/webhook-endpoints', {
        url: receiver.url,
        events: ['call.completed'],
        rate_limit: 1,
      });
      secrets.push(made.json.secret as string);
      const sent = await Promise.all(Array.from({ length: 60 }, () => t.simulate()));
      // The fan-out of 60 events comes first: seconds on a quiet machine; the window is for a loaded one.
      await waitFor(() => firstOfEach(receiver.received).length >= 2, 90_000, 'the first rate-limited deliveries');
      const raised = Date.now();
      // At 1 a second, the last of those still waiting could not start sooner than this after the raise.
      const oldPaceMs = (sent.length - firstOfEach(receiver.received).length - 1) * 1_000;
      expect(
        (await t.api('PATCH', `/v1/webhook-endpoints/${made.json.id as string}`, { rate_limit: 1000 })).status,
      ).toBe(200);
      const late = await t.simulate();
      await waitFor(
        () => new Set(receiver.received.map((r) => r.event.id)).size >= sent.length + 1,
        150_000,
        'every delivery after the raise',
      );
      // The old limit let at most one start in any second; starts after the raise, as the sender
      // recorded them, come several a second however busy the machine (a quiet one sends them all
      // within a few seconds).
      const deliveries = (await t.api('GET', `/v1/webhook-endpoints/${made.json.id as string}/deliveries?limit=100`))
        .json.data as { event_id: string; attempt_log: { at: string }[] }[];
      const startsAfter = deliveries
        .filter((d) => d.event_id !== late)
        .map((d) => Date.parse(d.attempt_log[0]?.at ?? ''))
        .filter((at) => at >= raised);
      expect(mostInOneSecond(startsAfter)).toBeGreaterThanOrEqual(3);
      // The new event does not take a place behind them: at the old pace its turn would come after all. On a
      // machine so busy that even the raised pace takes longer, it comes with the backlog's last, not a line later.
      const lateArrival = Math.min(...receiver.received.filter((r) => r.event.id === late).map((r) => r.at - raised));
      const backlogDrained = Math.max(0, ...startsAfter.map((at) => at - raised));
      expect(lateArrival).toBeLessThan(Math.max(oldPaceMs, backlogDrained + 10_000));
      expect(new Set(receiver.received.map((r) => r.event.id))).toEqual(new Set([...sent, late]));
    },
    300_000,
  );

  it(
    'PATCH sets and clears it, every endpoint object shows it; ' +
      'invalid values are 400 parameter_invalid and change nothing',
    async () => {
      const t = await newTenant(stack);
      const made = await t.api('POST', '/v1/webhook-endpoints', {
        url: 'http://127.0.0.1:9/hook',
        events: ['call.completed'],
      });
      expect(made.json.rate_limit).toBeNull();
      const id = made.json.id as string;
      const set = await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { rate_limit: 1000 });
      expect([set.status, set.json.rate_limit]).toEqual([200, 1000]);
      expect((await t.api('GET', `/v1/webhook-endpoints/${id}`)).json.rate_limit).toBe(1000);
      expect(
        ((await t.api('GET', '/v1/webhook-endpoints')).json.data as { rate_limit: unknown }[]).map((e) => e.rate_limit),
      ).toEqual([1000]);
      expect((await t.api('POST', `/v1/webhook-endpoints/${id}/rotate-secret`)).json.rate_limit).toBe(1000);
      // A PATCH without it keeps it.
      expect((await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { description: 'CRM' })).json.rate_limit).toBe(1000);

      const before = (await t.api('GET', '/v1/webhook-endpoints')).json;
      for (const value of [0, 1001, 1.5, '2', false]) {
        const patched = await t.api('PATCH', `/v1/webhook-endpoints/${id}`, {
          description: 'changed',
          rate_limit: value,
        });
        expect(expectError(patched, 400, 'parameter_invalid')).toMatchObject({
          param: 'rate_limit',
          message: expect.stringContaining('integer from 1 to 1000'),
        });
        const created = await t.api('POST', '/v1/webhook-endpoints', {
          url: 'http://127.0.0.1:9/other',
          events: ['*'],
          rate_limit: value,
        });
        expect(expectError(created, 400, 'parameter_invalid').param).toBe('rate_limit');
      }
      expect((await t.api('GET', '/v1/webhook-endpoints')).json).toEqual(before);

      const cleared = await t.api('PATCH', `/v1/webhook-endpoints/${id}`, { rate_limit: null });
      expect([cleared.status, cleared.json.rate_limit]).toEqual([200, null]);
      expect((await t.api('GET', `/v1/webhook-endpoints/${id}`)).json.rate_limit).toBeNull();
    },
  );
});
