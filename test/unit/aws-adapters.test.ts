import {
  ConflictException,
  CreateScheduleCommand,
  SchedulerClient,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { atExpression, AwsRetryScheduler } from '../../shared/delivery/aws/retry-scheduler';
import { SesMailer } from '../../shared/aws/ses-mailer';
import { SqsDeliveryQueue, SqsQueueDelays } from '../../shared/delivery/aws/sqs-queue';
import { RETRY_SCHEDULE_MS } from '../../shared/delivery/policy';

/** The SDK clients the adapters are given, each answered by aws-sdk-client-mock (the commands and their inputs are what is asserted). */
const sqs = mockClient(SQSClient);
const scheduler = mockClient(SchedulerClient);
const queueUrl = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const region = { region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };
const deliveryQueue = () => new SqsDeliveryQueue(new SQSClient(region), queueUrl);
/** The inputs of every SendMessage (or batch) the adapters sent. */
const sent = (command: typeof SendMessageCommand | typeof SendMessageBatchCommand) =>
  sqs
    .calls()
    .filter((c) => c.args[0] instanceof command)
    .map((c) => c.args[0].input as unknown as Record<string, unknown>);

const NOW = Date.parse('2026-11-21T18:04:05.123Z');
const message = {
  shop_id: 'shop_1',
  event_id: 'evt_1',
  delivery_id: 'dlv_01jd0000000000000000000000',
  endpoint_id: 'we_1',
  attempt: 3,
};
const target = {
  groupName: 'deliveries',
  queueArn: 'arn:aws:sqs:eu-west-1:1:deliveries',
  roleArn: 'arn:aws:iam::1:role/sched',
  deadLetterArn: 'arn:aws:sqs:eu-west-1:1:sched-dlq',
};

function retryScheduler() {
  return new AwsRetryScheduler(deliveryQueue(), new SchedulerClient(region), target, () => NOW);
}

beforeEach(() => {
  sqs.reset();
  scheduler.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  sqs.on(SendMessageBatchCommand).callsFake(async (input: { Entries: { Id: string }[] }) => ({
    Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}` })),
    Failed: [],
  }));
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:eu-west-1:1:schedule/deliveries/x' });
});
afterAll(() => {
  sqs.restore();
  scheduler.restore();
});

describe("wake-ups the queue alone gives (the fan-out's, for a delivery an open circuit held back)", () => {
  const delays = () => new SqsQueueDelays(deliveryQueue(), () => NOW);

  it('up to 15 minutes out: one delayed message', async () => {
    expect(delays().needsSchedule(15 * 60_000)).toBe(false);
    await delays().schedule(message, new Date(NOW + 60_000));
    expect(sent(SendMessageCommand)).toEqual([
      { QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: 60 },
    ]);
  });

  it('past that it needs a schedule: it refuses and sends nothing (its callers leave such rows to the sweeper)', async () => {
    expect(delays().needsSchedule(15 * 60_000 + 1)).toBe(true);
    await expect(delays().schedule(message, new Date(NOW + 30 * 60_000))).rejects.toThrow(/needs a schedule/);
    expect(sqs.calls()).toHaveLength(0);
  });
});

describe('retry scheduling on AWS', () => {
  it.each([
    [RETRY_SCHEDULE_MS[0] as number, 60],
    [RETRY_SCHEDULE_MS[1] as number, 300],
  ])('a retry %d ms out goes back on the queue with DelaySeconds %d', async (delayMs, seconds) => {
    await retryScheduler().schedule(message, new Date(NOW + delayMs));
    expect(sent(SendMessageCommand)).toEqual([
      { QueueUrl: queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: seconds },
    ]);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
  });

  it.each(RETRY_SCHEDULE_MS.slice(2))('a retry %d ms out becomes a one-time EventBridge schedule', async (delayMs) => {
    const at = new Date(NOW + delayMs);
    await retryScheduler().schedule(message, at);
    expect(sqs.calls()).toHaveLength(0);
    expect(scheduler).toHaveReceivedCommandTimes(CreateScheduleCommand, 1);
    expect(scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input).toEqual({
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
      // A token per wake-up, in the input the SDK serialises once and resends on each of its attempts.
      ClientToken: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('gives each wake-up a token of its own', async () => {
    await retryScheduler().schedule(message, new Date(NOW + 2 * 3600_000));
    await retryScheduler().schedule({ ...message, attempt: 4 }, new Date(NOW + 6 * 3600_000));
    const tokens = scheduler.commandCalls(CreateScheduleCommand).map((c) => c.args[0].input.ClientToken);
    expect(new Set(tokens).size).toBe(2);
  });

  it('puts ids only in a schedule (its input is at most 8 KB), the event a message carried left to the table', async () => {
    const event = {
      id: 'evt_1',
      object: 'event' as const,
      type: 'call.completed' as const,
      timestamp: '2026-11-21T18:00:00.000Z',
      data: { id: 'call_1' },
      shop_id: 'shop_1',
      endpoint_id: null,
    };
    await retryScheduler().schedule({ ...message, event }, new Date(NOW + 2 * 3600_000));
    expect(JSON.parse(scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input.Target?.Input as string)).toEqual(
      message,
    );
  });

  it('treats a duplicate schedule name as done', async () => {
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ConflictException({ message: 'exists', $metadata: {}, Message: 'exists' }));
    await expect(retryScheduler().schedule(message, new Date(NOW + 2 * 3600_000))).resolves.toBeUndefined();
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ValidationException({ message: 'no', $metadata: {}, Message: 'no' }));
    await expect(retryScheduler().schedule(message, new Date(NOW + 2 * 3600_000))).rejects.toThrow('no');
  });

  it("costs a schedule of its own only past the queue's 15-minute delay", () => {
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
    let n = 0;
    // The first batch: SQS takes every entry but the fourth.
    sqs.on(SendMessageBatchCommand).callsFake(async (input: { Entries: { Id: string }[] }) => ({
      Successful: input.Entries.filter((e) => n > 0 || e.Id !== '3').map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}` })),
      Failed: n++ === 0 ? [{ Id: '3', SenderFault: false, Code: 'InternalError' }] : [],
    }));
    await deliveryQueue().send(messages);
    const batches = sent(SendMessageBatchCommand).map((b) =>
      (b.Entries as { Id: string; MessageBody: string }[]).map(
        (e) => (JSON.parse(e.MessageBody) as { delivery_id: string }).delivery_id,
      ),
    );
    expect(batches).toEqual([
      messages.slice(0, 10).map((m) => m.delivery_id),
      ['dlv_3'],
      messages.slice(10).map((m) => m.delivery_id),
    ]);
    expect(sent(SendMessageBatchCommand).every((b) => b.QueueUrl === queueUrl)).toBe(true);
  });

  it("gives up on entries SQS refuses three times, with an error (the caller's batch is retried whole)", async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolves({ Successful: [], Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] });
    await expect(deliveryQueue().send([message])).rejects.toThrow('SQS refused 1 delivery message(s)');
    expect(sqs).toHaveReceivedCommandTimes(SendMessageBatchCommand, 3);
  });
});

describe('owner emails through SES', () => {
  const ses = mockClient(SESv2Client);
  afterAll(() => ses.restore());

  it('sends one SendEmail from the configured sender to the owner, as plain text', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'e-1' });
    await new SesMailer(new SESv2Client(region), 'alerts@shop-calls.example').send({
      to: 'owner@plumbing.example',
      subject: 'Endpoint disabled',
      text: 'Your endpoint was disabled.',
    });
    expect(ses).toHaveReceivedCommandWith(SendEmailCommand, {
      FromEmailAddress: 'alerts@shop-calls.example',
      Destination: { ToAddresses: ['owner@plumbing.example'] },
      Content: {
        Simple: { Subject: { Data: 'Endpoint disabled' }, Body: { Text: { Data: 'Your endpoint was disabled.' } } },
      },
    });
  });
});
