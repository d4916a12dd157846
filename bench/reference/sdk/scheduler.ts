import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';

/** The EventBridge Scheduler client and one one-time schedule that puts a message on the delivery queue. */
export async function createSchedule(): Promise<void> {
  await new SchedulerClient({}).send(
    new CreateScheduleCommand({
      Name: 'reference-a1',
      GroupName: process.env.SCHEDULER_GROUP,
      ScheduleExpression: 'at(2030-01-01T00:00:00)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: process.env.QUEUE_ARN, RoleArn: process.env.SCHEDULER_ROLE_ARN, Input: '{}' },
    }),
  );
}
