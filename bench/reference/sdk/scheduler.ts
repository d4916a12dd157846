import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';

/** The EventBridge Scheduler client and, when asked, one one-time schedule that puts a message on the delivery queue. */
export async function callScheduler(operations: readonly string[]): Promise<void> {
  const scheduler = new SchedulerClient({});
  for (const operation of operations) {
    if (operation !== 'CreateSchedule') throw new Error(`the Scheduler reference makes no ${operation} request`);
    await scheduler.send(
      new CreateScheduleCommand({
        Name: 'reference-a1',
        GroupName: process.env.SCHEDULER_GROUP,
        ScheduleExpression: 'at(2030-01-01T00:00:00)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: { Arn: process.env.QUEUE_ARN, RoleArn: process.env.SCHEDULER_ROLE_ARN, Input: '{}' },
      }),
    );
  }
}
