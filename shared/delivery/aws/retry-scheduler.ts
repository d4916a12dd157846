import { randomUUID } from 'node:crypto';
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { withoutEvent, type DeliveryMessage } from '../records';
import type { RetryScheduler } from '../ports';
import { SqsQueueDelays, type SqsDeliveryQueue } from './sqs-queue';

export interface SchedulerTarget {
  groupName: string;
  /** ARN of the delivery queue the schedule puts the message on. */
  queueArn: string;
  /** Role Scheduler assumes; it may only sqs:SendMessage to the delivery queue. */
  roleArn: string;
  /** Where Scheduler puts a message it could not deliver. */
  deadLetterArn: string;
}

/** `at()` wants local time without zone; with ScheduleExpressionTimezone UTC that is UTC. */
export const atExpression = (at: Date): string => `at(${at.toISOString().slice(0, 19)})`;

/** Names are unique per delivery and attempt, so a duplicate create is a harmless conflict. */
export const scheduleName = (m: DeliveryMessage): string => `${m.delivery_id}-a${m.attempt}`;

/**
 * Retries up to 15 minutes out (1m, 5m) go back on the queue with DelaySeconds: exact and
 * free of Scheduler quotas. Later ones become one-time EventBridge Scheduler schedules
 * that delete themselves after firing (within the minute, fine at 30m and beyond).
 */
export class AwsRetryScheduler implements RetryScheduler {
  private readonly delays: SqsQueueDelays;

  constructor(
    queue: SqsDeliveryQueue,
    private readonly scheduler: SchedulerClient,
    private readonly target: SchedulerTarget,
    private readonly now: () => number = Date.now,
  ) {
    this.delays = new SqsQueueDelays(queue, now);
  }

  needsSchedule(delayMs: number): boolean {
    return this.delays.needsSchedule(delayMs);
  }

  async schedule(message: DeliveryMessage, at: Date): Promise<void> {
    const delayMs = at.getTime() - this.now();
    if (!this.needsSchedule(delayMs)) return this.delays.schedule(message, at);
    try {
      await this.scheduler.send(
        new CreateScheduleCommand({
          Name: scheduleName(message),
          GroupName: this.target.groupName,
          ScheduleExpression: atExpression(at),
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: this.target.queueArn,
            RoleArn: this.target.roleArn,
            Input: JSON.stringify(withoutEvent(message)),
            RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 3600 },
            DeadLetterConfig: { Arn: this.target.deadLetterArn },
          },
          // One token for every attempt the SDK makes: a retried create that had landed is not a second schedule.
          ClientToken: randomUUID(),
        }),
      );
    } catch (err) {
      // The name is the delivery's and attempt's: a schedule that exists already is this wake-up, made before.
      if (!(err instanceof ConflictException)) throw err;
    }
  }
}
