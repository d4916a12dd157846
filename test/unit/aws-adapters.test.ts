import { createHash } from 'node:crypto';
import { AwsApi, SQS } from '../../shared/aws/aws-call';
import { atExpression, AwsRetryScheduler } from '../../shared/aws/retry-scheduler';
import type { CreateScheduleInput } from '../../shared/aws/schedule-api';
import { SqsDeliveryQueue, SqsQueueDelays } from '../../shared/aws/sqs-queue';
import { RETRY_SCHEDULE_MS } from '../../shared/webhooks/policy';
import { identity, noPause, startAwsWire, type AwsWire, type Seen } from '../helpers/aws-wire';

/** A stand-in SQS (test/helpers/aws-wire.ts) that takes every message, unless a test queues other answers. */
let wire: AwsWire;
let queueUrl: string;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
beforeAll(async () => {
  wire = await startAwsWire((req) => {
    const body = JSON.parse(req.body) as { MessageBody?: string; Entries?: { Id: string; MessageBody: string }[] };
    if (!body.Entries) return { status: 200, body: JSON.stringify({ MessageId: 'm', MD5OfMessageBody: md5(body.MessageBody ?? '') }) };
    return { status: 200, body: JSON.stringify({ Successful: body.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })), Failed: [] }) };
  });
  queueUrl = `${wire.endpoint}/123456789012/deliveries`;
});
afterAll(() => wire.stop());

/** The messages SQS was asked to take: SendMessage inputs, by operation. */
const sent = (op: string) => wire.seen.filter((s) => s.headers['x-amz-target'] === `AmazonSQS.${op}`).map((s: Seen) => JSON.parse(s.body) as Record<string, unknown>);
const deliveryQueue = () => new SqsDeliveryQueue(new AwsApi(SQS, identity, { pause: noPause }), queueUrl);

/** The Scheduler API (shared/aws/schedule-api.ts has its own test): records each create, or fails as told. */
const scheduler = {
  created: [] as CreateScheduleInput[],
  failure: undefined as Error | undefined,
  create(input: CreateScheduleInput) {
    this.created.push(input);
    return this.failure ? Promise.reject(this.failure) : Promise.resolve();
  },
  reset() {
    this.created = [];
    this.failure = undefined;
  },
};
const NOW = Date.parse('2026-11-21T18:04:05.123Z');
const message = { shop_id: 'shop_1', event_id: 'evt_1', delivery_id: 'dlv_01jd0000000000000000000000', endpoint_id: 'we_1', attempt: 3 };
const target = { groupName: 'deliveries', queueArn: 'arn:aws:sqs:eu-west-1:1:deliveries', roleArn: 'arn:aws:iam::1:role/sched', deadLetterArn: 'arn:aws:sqs:eu-west-1:1:sched-dlq' };

function retryScheduler() {
  return new AwsRetryScheduler(deliveryQueue(), scheduler, target, () => NOW);
}

beforeEach(() => {
  wire.reset();
  scheduler.reset();
});

describe('wake-ups the queue alone gives (the fan-out\'s, for a delivery an open circuit held back)', () => {
  const delays = () => new SqsQueueDelays(deliveryQueue(), () => NOW);

  it('up to 15 minutes out: one delayed message', async () => {
    expect(delays().needsSchedule(15 * 60_000)).toBe(false);
    await delays().schedule(message, new Date(NOW + 60_000));
    expect(sent('SendMessage')).toEqual([{ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: 60 }]);
  });

  it('past that it needs a schedule: it refuses and sends nothing (its callers leave such rows to the sweeper)', async () => {
    expect(delays().needsSchedule(15 * 60_000 + 1)).toBe(true);
    await expect(delays().schedule(message, new Date(NOW + 30 * 60_000))).rejects.toThrow(/needs a schedule/);
    expect(wire.seen).toHaveLength(0);
  });
});

describe('retry scheduling on AWS', () => {
  it.each([
    [RETRY_SCHEDULE_MS[0] as number, 60],
    [RETRY_SCHEDULE_MS[1] as number, 300],
  ])('a retry %d ms out goes back on the queue with DelaySeconds %d', async (delayMs, seconds) => {
    await retryScheduler().schedule(message, new Date(NOW + delayMs));
    expect(sent('SendMessage')).toEqual([{ QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: seconds }]);
    expect(scheduler.created).toHaveLength(0);
  });

  it.each(RETRY_SCHEDULE_MS.slice(2))('a retry %d ms out becomes a one-time EventBridge schedule', async (delayMs) => {
    const at = new Date(NOW + delayMs);
    await retryScheduler().schedule(message, at);
    expect(wire.seen).toHaveLength(0);
    expect(scheduler.created[0]).toEqual({
      Name: 'dlv_01jd0000000000000000000000-a3',
      GroupName: 'deliveries',
      ScheduleExpression: `at(${at.toISOString().slice(0, 19)})`,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: target.queueArn,
        RoleArn: target.roleArn,
        Input: JSON.stringify(message),
        RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: target.deadLetterArn },
      },
    });
  });

  it('puts ids only in a schedule (its input is at most 8 KB), the event a message carried left to the table', async () => {
    const event = { id: 'evt_1', object: 'event' as const, type: 'call.completed' as const, timestamp: '2026-11-21T18:00:00.000Z', data: { id: 'call_1' }, shop_id: 'shop_1', endpoint_id: null };
    await retryScheduler().schedule({ ...message, event }, new Date(NOW + 2 * 3600_000));
    expect(JSON.parse(scheduler.created[0]?.Target.Input as string)).toEqual(message);
  });

  it('treats a duplicate schedule name as done', async () => {
    scheduler.failure = Object.assign(new Error('exists'), { name: 'ConflictException' });
    await expect(retryScheduler().schedule(message, new Date(NOW + 2 * 3600_000))).resolves.toBeUndefined();
    scheduler.failure = Object.assign(new Error('no'), { name: 'ValidationException' });
    await expect(retryScheduler().schedule(message, new Date(NOW + 2 * 3600_000))).rejects.toThrow('no');
  });

  it('costs a schedule of its own only past the queue\'s 15-minute delay', () => {
    const s = retryScheduler();
    expect(RETRY_SCHEDULE_MS.map((ms) => s.needsSchedule(ms))).toEqual([false, false, true, true, true, true, true]);
    expect([s.needsSchedule(15 * 60_000), s.needsSchedule(15 * 60_000 + 1)]).toEqual([false, true]);
  });

  it('writes at() in UTC without milliseconds', () => {
    expect(atExpression(new Date('2026-11-21T20:34:05.999Z'))).toBe('at(2026-11-21T20:34:05)');
  });
});

describe('delivery queue', () => {
  const messages = Array.from({ length: 16 }, (_, i) => ({ ...message, delivery_id: `dlv_${i}` }));

  it('sends 16 messages in 2 batches and sends again the entries SQS did not take', async () => {
    const refusedThree = (req: Seen) => {
      const entries = (JSON.parse(req.body) as { Entries: { Id: string; MessageBody: string }[] }).Entries;
      const ok = entries.filter((e) => e.Id !== '3');
      return { status: 200, body: JSON.stringify({ Successful: ok.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })), Failed: [{ Id: '3', SenderFault: false, Code: 'InternalError' }] }) };
    };
    const first = wire.fallback;
    let n = 0;
    wire.fallback = (req) => (n++ === 0 ? refusedThree(req) : first(req));
    try {
      await deliveryQueue().send(messages);
    } finally {
      wire.fallback = first;
    }
    const batches = sent('SendMessageBatch').map((b) => (b.Entries as { Id: string; MessageBody: string }[]).map((e) => (JSON.parse(e.MessageBody) as { delivery_id: string }).delivery_id));
    expect(batches).toEqual([messages.slice(0, 10).map((m) => m.delivery_id), ['dlv_3'], messages.slice(10).map((m) => m.delivery_id)]);
  });

  it('gives up on entries SQS refuses three times, with an error (the caller\'s batch is retried whole)', async () => {
    const first = wire.fallback;
    wire.fallback = () => ({ status: 200, body: '{"Successful":[],"Failed":[{"Id":"0","SenderFault":false,"Code":"InternalError"}]}' });
    try {
      await expect(deliveryQueue().send([message])).rejects.toThrow('SQS refused 1 delivery message(s)');
    } finally {
      wire.fallback = first;
    }
    expect(sent('SendMessageBatch')).toHaveLength(3);
  });
});
