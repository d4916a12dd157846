import { CRASH_KINDS, describeKind, runCrashScenario, type CrashKind } from '../../bench/lib/crash-scenario';
import { answers, closeFaultReceivers, startFaultReceiver } from '../../bench/lib/fault-receiver';
import { closeChildStacks, startChildStack, type ChildStack } from '../helpers/child-stack';
import { fileEmulator } from '../helpers/stack';

/**
 * The contract's "Durable" and "No history replay" rules, on the real `npm start` entry run
 * as a child process on a DynamoDB Local of the file's own: the app is killed (SIGKILL) or
 * stopped (Ctrl-C) and started again while its table stays up, as a table in AWS outlives a
 * Lambda's crash, and every accepted (event, endpoint) pair must still reach its receiver,
 * verified. TIME_SCALE 0.01: the first retries fall 600 ms and 3 s out. What is
 * asserted is that nothing is lost (waiting up to 60 s after the restart, or 35 s without any
 * request); how soon it arrives is what bench/crash.ts prints.
 */
describe('delivery across a crash or a stop of the local stack (child process, TIME_SCALE 0.01)', () => {
  let stack: ChildStack;
  beforeAll(async () => {
    stack = await startChildStack({
      timeScale: 0.01,
      deliveryTimeoutMs: 2000,
      dynamodbEndpoint: (await fileEmulator()).endpoint,
    });
  }, 120_000);
  beforeEach(async () => {
    // A scenario that failed half-way may have left the stack down.
    if (!stack.running) await stack.restart();
  }, 120_000);
  afterEach(() => closeFaultReceivers());
  afterAll(async () => {
    await closeFaultReceivers();
    await closeChildStacks();
  }, 60_000);

  /**
   * The flaky receiver answers 500 to the first two requests of each event, but never three
   * times in a row: it keeps retries pending without ever looking dead to a circuit breaker
   * (which opens after 5 consecutive failures and then sends only probes), so what is checked
   * here is durability, not the breaker's probe schedule.
   */
  const endpoints = () => [
    { name: 'flaky', policy: answers.flaky(2, 2) },
    { name: 'healthy', policy: answers.ok() },
  ];

  it.each(CRASH_KINDS.map((k) => [describeKind[k], k] as [string, CrashKind]))(
    '%s: no accepted (event, endpoint) pair is lost',
    async (_label, kind) => {
      const result = await runCrashScenario(stack, {
        kind,
        events: 30,
        endpoints: endpoints(),
        settleTimeoutMs: 60_000,
        quietMs: 1000,
        timeScale: 0.01,
      });
      expect(result.acceptedEvents).toBeGreaterThan(0);
      expect(result.rejected).toBe(0);
      if (kind === 'sigint-retries-pending') expect(result.exitCode).toBe(0);
      const summary =
        `killed ${result.killedAt}; accepted ${result.acceptedPairs} pairs, delivered ${result.deliveredPairs} ` +
        `(${result.deliveredBeforeKill} before the kill), duplicates ${result.duplicates}`;
      expect({ summary, lost: result.lost }).toEqual({ summary, lost: [] });
    },
    150_000,
  );

  it('a new endpoint receives only events created after it, across stops, restarts and stream replays', async () => {
    const tenant = await stack.newTenant('No replay');
    const first = await startFaultReceiver('first', answers.ok());
    const created1 = await stack.api('POST', '/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: first.url, events: ['call.completed'] },
    });
    expect(created1.status).toBe(201);
    first.setSecret(created1.json.secret as string);
    const old: string[] = [];
    for (let i = 0; i < 20; i++) old.push(...(await stack.ingest(tenant.shop)).event_ids);
    await until(() => old.every((id) => first.firstOk.has(id)), 20_000, 'the 20 old events at endpoint 1');

    expect(await stack.sigint()).toBe(0);
    await stack.restart();
    const second = await startFaultReceiver('second', answers.ok());
    const created2 = await stack.api('POST', '/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: second.url, events: ['call.completed'] },
    });
    expect(created2.status).toBe(201);
    second.setSecret(created2.json.secret as string);
    const [fresh] = (await stack.ingest(tenant.shop)).event_ids;
    await until(
      () => first.firstOk.has(fresh as string) && second.firstOk.has(fresh as string),
      20_000,
      'the new event at both endpoints',
    );

    // Stopped and started again with endpoint 2 in place: a stream read from its start would now fan the old
    // events out to it.
    expect(await stack.sigint()).toBe(0);
    await stack.restart();
    await new Promise((r) => setTimeout(r, 3000));

    // Which events arrived, not how often: delivery is at least once (a stop between the receiver's answer and
    // the row's update sends it again).
    const arrived = (r: typeof first) => [...new Set(r.receipts.map((x) => x.eventId))].sort();
    expect(arrived(second)).toEqual([fresh]);
    expect(arrived(first)).toEqual([...old, fresh].sort());
    expect([first.rejected, second.rejected]).toEqual([0, 0]);
  }, 180_000);
});

async function until(probe: () => boolean, timeoutMs: number, label: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
