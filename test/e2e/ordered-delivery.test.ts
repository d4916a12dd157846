import { runCrashScenario } from '../../bench/lib/crash-scenario';
import { answers, closeFaultReceivers } from '../../bench/lib/fault-receiver';
import { simulatedCall } from '../../lib/cli/simulate';
import { issueKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { createShop } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';
import { call, expectError } from '../helpers/http';
import {
  closeReceivers,
  expectRequests,
  firstOfEach,
  startReceiver,
  waitFor,
  type Received,
} from '../helpers/receiver';
import { fileEmulator, startTestStack } from '../helpers/stack';
import { closeChildStacks, startChildStack, type ChildStack } from '../helpers/child-stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type Delivery = {
  id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  held_by: string | null;
  next_attempt_at: string | null;
};

/** TIME_SCALE 0.05: a failed first attempt is retried 3 s later, long enough to look at the held delivery meanwhile. */
const TIME_SCALE = 0.05;

async function newTenant(stack: Stack) {
  const shop = await createShop(stack.deps, { name: 'Order Shop', owner_email: 'owner@order.test' });
  const { key } = await issueKey(stack.deps.apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  const api = (method: string, path: string, body?: unknown) => call(stack.url, method, path, { key, body });
  /** A call that made a job (`job.created`); returns the job's id. */
  const newJob = async () => {
    const { event_ids } = await ingestCall(
      stack.deps,
      simulatedCall(shop, { withJob: true, emergency: false, endedAt: new Date() }),
    );
    const events = await Promise.all(event_ids.map(async (id) => (await api('GET', `/v1/events/${id}`)).json));
    return (events.find((e) => e.type === 'job.created')?.data as { id: string }).id;
  };
  const approve = async (jobId: string) => {
    const approved = await api('POST', `/v1/jobs/${jobId}/approve`, { version: 1 });
    expect(approved.status).toBe(200);
  };
  return { shop, api, newJob, approve };
}

const of = (received: Received[], type: string, jobId: string) =>
  received.findIndex((r) => r.event.type === type && r.event.data.id === jobId);

describe('ordered delivery per resource (ordering: per_resource)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startTestStack({ timeScale: TIME_SCALE });
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it('validates ordering, shows it on every endpoint object, and PATCH changes it', async () => {
    const t = await newTenant(stack);
    const receiver = await startReceiver(() => []);
    const plain = await t.api('POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['job.created'] });
    expect(plain.json.ordering).toBe('none');
    const bad = expectError(
      await t.api('POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['job.created'], ordering: 'fifo' }),
      400,
      'parameter_invalid',
    );
    expect(bad).toMatchObject({ param: 'ordering', message: expect.stringContaining('none, per_resource') });
    expect(
      expectError(
        await t.api('PATCH', `/v1/webhook-endpoints/${plain.json.id as string}`, { ordering: null }),
        400,
        'parameter_invalid',
      ).param,
    ).toBe('ordering');
    // Refused requests change nothing.
    expect(((await t.api('GET', '/v1/webhook-endpoints')).json.data as unknown[]).length).toBe(1);
    const patched = await t.api('PATCH', `/v1/webhook-endpoints/${plain.json.id as string}`, {
      ordering: 'per_resource',
    });
    expect(patched.json.ordering).toBe('per_resource');
    expect((await t.api('GET', `/v1/webhook-endpoints/${plain.json.id as string}`)).json.ordering).toBe('per_resource');
    expect(
      ((await t.api('GET', '/v1/webhook-endpoints')).json.data as { ordering: string }[]).map((e) => e.ordering),
    ).toEqual(['per_resource']);
    expect((await t.api('POST', `/v1/webhook-endpoints/${plain.json.id as string}/rotate-secret`)).json.ordering).toBe(
      'per_resource',
    );
  });

  it("a failed job.created holds its job's job.approved until it succeeds; other jobs' events go on", async () => {
    const t = await newTenant(stack);
    const secrets: string[] = [];
    // The first job's job.created fails until the test has seen what waits behind it (its retries come 3 s, then
    // 15 s apart): however slow the machine, the held state is there to see.
    let failing = true;
    const succeeded: Received[] = [];
    const receiver = await startReceiver(
      () => secrets,
      (n, res) => {
        const got = receiver.received[n - 1] as Received;
        const fail = failing && got.event.type === 'job.created' && got.event.data.id === slowJob;
        if (!fail) succeeded.push(got);
        res.writeHead(fail ? 500 : 204).end();
      },
    );
    const made = await t.api('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['job.created', 'job.approved'],
      ordering: 'per_resource',
    });
    expect(made.status).toBe(201);
    expect(made.json.ordering).toBe('per_resource');
    secrets.push(made.json.secret as string);

    let slowJob = '';
    slowJob = await t.newJob();
    await waitFor(() => of(receiver.received, 'job.created', slowJob) >= 0, 10_000, 'the failed first attempt');
    await t.approve(slowJob);
    const fastJob = await t.newJob();
    await t.approve(fastJob);
    await waitFor(() => of(receiver.received, 'job.approved', fastJob) >= 0, 10_000, "the other job's events");
    // The other job went through while the first job's job.created waits for its retry, and its job.approved with it.
    expect(new Set(receiver.received.filter((r) => r.event.data.id === slowJob).map((r) => r.event.type))).toEqual(
      new Set(['job.created']),
    );

    const events = (await t.api('GET', '/v1/events?limit=20')).json.data as {
      id: string;
      type: string;
      data: { id: string };
    }[];
    const approvedId = events.find((e) => e.type === 'job.approved' && e.data.id === slowJob)?.id as string;
    const createdId = events.find((e) => e.type === 'job.created' && e.data.id === slowJob)?.id as string;
    const [heldDelivery] = (await t.api('GET', `/v1/events/${approvedId}`)).json.deliveries as Delivery[];
    const [firstDelivery] = (await t.api('GET', `/v1/events/${createdId}`)).json.deliveries as Delivery[];
    expect(firstDelivery).toMatchObject({ status: 'retrying', held_by: null });
    expect(heldDelivery).toMatchObject({
      status: 'pending',
      attempts: 0,
      held_by: firstDelivery?.id,
      next_attempt_at: null,
    });
    const listed = (await t.api('GET', `/v1/webhook-endpoints/${made.json.id as string}/deliveries?status=pending`))
      .json.data as Delivery[];
    expect(listed.find((d) => d.id === heldDelivery?.id)?.held_by).toBe(firstDelivery?.id);

    // Its next retry succeeds, then job.approved goes out, after it.
    failing = false;
    await waitFor(() => of(receiver.received, 'job.approved', slowJob) >= 0, 30_000, 'the held job.approved');
    const slow = receiver.received.filter((r) => r.event.data.id === slowJob);
    expect(firstOfEach(slow).map((r) => r.event.type)).toEqual(['job.created', 'job.approved']);
    // Each attempt of job.created (the last a success), then job.approved (a request may come twice in chaos mode).
    const createdAttempts = ((await t.api('GET', `/v1/events/${createdId}`)).json.deliveries as Delivery[])[0]
      ?.attempts;
    expect(createdAttempts).toBeGreaterThanOrEqual(2);
    expectRequests(slow, (createdAttempts ?? 0) + 1, stack);
    const createdOk = succeeded.find((r) => r.event.id === createdId) as Received;
    const approvedAt = receiver.received.find((r) => r.event.id === approvedId) as Received;
    expect(receiver.received.indexOf(approvedAt)).toBeGreaterThan(receiver.received.indexOf(createdOk));
    const released = (await t.api('GET', `/v1/events/${approvedId}`)).json.deliveries as Delivery[];
    expect(released[0]).toMatchObject({ status: 'succeeded', attempts: 1, held_by: null });
    // Promptly: within a (scaled) minute of the earlier one's success, not at some later sweep.
    expect(approvedAt.at - createdOk.at).toBeLessThan(60_000 * TIME_SCALE);
  }, 90_000);

  it('a held delivery cancelled by a disable shows held_by null, as every delivery that does not wait', async () => {
    const t = await newTenant(stack);
    const secrets: string[] = [];
    // Every job.created fails: the job's job.approved waits behind its retries.
    const receiver = await startReceiver(
      () => secrets,
      (n, res) => res.writeHead((receiver.received[n - 1] as Received).event.type === 'job.created' ? 500 : 204).end(),
    );
    const made = await t.api('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['job.created', 'job.approved'],
      ordering: 'per_resource',
    });
    secrets.push(made.json.secret as string);
    const job = await t.newJob();
    await waitFor(() => of(receiver.received, 'job.created', job) >= 0, 10_000, 'the failed job.created');
    await t.approve(job);
    const events = (await t.api('GET', '/v1/events?limit=20')).json.data as { id: string; type: string }[];
    const approvedId = events.find((e) => e.type === 'job.approved')?.id as string;
    const deliveryOf = async () => ((await t.api('GET', `/v1/events/${approvedId}`)).json.deliveries as Delivery[])[0];
    let held = await deliveryOf();
    for (const deadline = Date.now() + 10_000; !held?.held_by && Date.now() < deadline; held = await deliveryOf())
      await new Promise((r) => setTimeout(r, 50));
    expect(held).toMatchObject({ status: 'pending', attempts: 0, held_by: expect.stringMatching(/^dlv_/) });

    const disabled = await t.api('PATCH', `/v1/webhook-endpoints/${made.json.id as string}`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(await deliveryOf()).toMatchObject({ id: held?.id, status: 'cancelled', attempts: 0, held_by: null });
    const listed = (await t.api('GET', `/v1/webhook-endpoints/${made.json.id as string}/deliveries?status=cancelled`))
      .json.data as Delivery[];
    expect(listed.map((d) => d.held_by)).toEqual(listed.map(() => null));
    expect(listed.map((d) => d.id)).toContain(held?.id);
  }, 30_000);

  it('with ordering none, a failed job.created holds nothing back', async () => {
    const t = await newTenant(stack);
    const secrets: string[] = [];
    const receiver = await startReceiver(
      () => secrets,
      (n, res) => res.writeHead((receiver.received[n - 1] as Received).event.type === 'job.created' ? 500 : 204).end(),
    );
    const made = await t.api('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['job.created', 'job.approved'],
    });
    secrets.push(made.json.secret as string);
    const job = await t.newJob();
    await waitFor(() => of(receiver.received, 'job.created', job) >= 0, 10_000, 'job.created');
    await t.approve(job);
    await waitFor(() => of(receiver.received, 'job.approved', job) >= 0, 10_000, 'job.approved, not held');
    expect(firstOfEach(receiver.received.filter((r) => r.event.data.id === job)).map((r) => r.event.type)).toEqual([
      'job.created',
      'job.approved',
    ]);
  }, 30_000);
});

describe('ordered delivery across a crash (child process, TIME_SCALE 0.01)', () => {
  let stack: ChildStack;
  beforeAll(async () => {
    stack = await startChildStack({
      timeScale: 0.01,
      deliveryTimeoutMs: 2000,
      dynamodbEndpoint: (await fileEmulator()).endpoint,
    });
  }, 120_000);
  afterAll(async () => {
    await closeFaultReceivers();
    await closeChildStacks();
  }, 60_000);

  it("a SIGKILL with held deliveries loses none and breaks no job's order", async () => {
    // The ordered receiver answers 500 to the first two requests of each event (never three in a row): job.approved
    // waits behind a retrying job.created, whose second retry is seconds away: long enough to see on a busy machine.
    const result = await runCrashScenario(stack, {
      kind: 'sigkill-retries-pending',
      events: 20,
      endpoints: [{ name: 'healthy', policy: answers.ok() }],
      ordered: { name: 'ordered', policy: answers.flaky(2, 2) },
      // An open circuit (failures and timeouts on a busy machine) moves a retry to the 2 h step: 72 s here.
      settleTimeoutMs: 120_000,
      quietMs: 1000,
      timeScale: 0.01,
    });
    expect(result.ordered?.jobs).toBeGreaterThan(0);
    expect(result.ordered?.heldBeforeKill).toBeGreaterThan(0);
    expect(result.rejected).toBe(0);
    expect({ lost: result.lost, outOfOrder: result.ordered?.outOfOrder }).toEqual({ lost: [], outOfOrder: [] });
  }, 240_000);
});
