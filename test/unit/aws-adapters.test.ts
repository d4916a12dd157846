import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { atExpression, AwsRetryScheduler } from '../../shared/aws/retry-scheduler';
import type { CreateScheduleInput } from '../../shared/aws/schedule-api';
import { SesMailer } from '../../shared/aws/ses-mailer';
import { SqsDeliveryQueue, SqsQueueDelays } from '../../shared/aws/sqs-queue';
import { RETRY_SCHEDULE_MS } from '../../shared/webhooks/policy';

const sqs = mockClient(SQSClient);
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
  const queue = new SqsDeliveryQueue(new SQSClient({}), 'https://sqs/deliveries');
  return new AwsRetryScheduler(queue, scheduler, target, () => NOW);
}

beforeEach(() => {
  sqs.reset();
  scheduler.reset();
  sqs.on(SendMessageCommand).resolves({});
  sqs.on(SendMessageBatchCommand).resolves({ Failed: [] });
});

describe('wake-ups the queue alone gives (the fan-out\'s, for a delivery an open circuit held back)', () => {
  const delays = () => new SqsQueueDelays(new SqsDeliveryQueue(new SQSClient({}), 'https://sqs/deliveries'), () => NOW);

  it('up to 15 minutes out: one delayed message', async () => {
    expect(delays().needsSchedule(15 * 60_000)).toBe(false);
    await delays().schedule(message, new Date(NOW + 60_000));
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({ QueueUrl: 'https://sqs/deliveries', MessageBody: JSON.stringify(message), DelaySeconds: 60 });
  });

  it('past that it needs a schedule: it refuses and sends nothing (its callers leave such rows to the sweeper)', async () => {
    expect(delays().needsSchedule(15 * 60_000 + 1)).toBe(true);
    await expect(delays().schedule(message, new Date(NOW + 30 * 60_000))).rejects.toThrow(/needs a schedule/);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
  });
});

describe('retry scheduling on AWS', () => {
  it.each([
    [RETRY_SCHEDULE_MS[0] as number, 60],
    [RETRY_SCHEDULE_MS[1] as number, 300],
  ])('a retry %d ms out goes back on the queue with DelaySeconds %d', async (delayMs, seconds) => {
    await retryScheduler().schedule(message, new Date(NOW + delayMs));
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({ QueueUrl: 'https://sqs/deliveries', MessageBody: JSON.stringify(message), DelaySeconds: seconds });
    expect(scheduler.created).toHaveLength(0);
  });

  it.each(RETRY_SCHEDULE_MS.slice(2))('a retry %d ms out becomes a one-time EventBridge schedule', async (delayMs) => {
    const at = new Date(NOW + delayMs);
    await retryScheduler().schedule(message, at);
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
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
  it('sends 16 messages in 2 batches and retries entries SQS refused', async () => {
    sqs.on(SendMessageBatchCommand).resolvesOnce({ Failed: [{ Id: '3', SenderFault: false, Code: 'x' }] }).resolves({ Failed: [] });
    const queue = new SqsDeliveryQueue(new SQSClient({}), 'https://sqs/deliveries');
    await queue.send(Array.from({ length: 16 }, (_, i) => ({ ...message, delivery_id: `dlv_${i}` })));
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries?.length);
    expect(calls).toEqual([10, 1, 6]);
  });
});

describe('SES mailer', () => {
  it('sends a plain-text email from the configured sender', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({});
    await new SesMailer(new SESv2Client({}), 'alerts@shop-calls.example').send({ to: 'owner@shop.test', subject: 'S', text: 'T' });
    expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input).toEqual({
      FromEmailAddress: 'alerts@shop-calls.example',
      Destination: { ToAddresses: ['owner@shop.test'] },
      Content: { Simple: { Subject: { Data: 'S' }, Body: { Text: { Data: 'T' } } } },
    });
  });
});
