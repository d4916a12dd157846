import { randomUUID } from 'node:crypto';
import type { AwsApi } from './aws-call';

/** The fields of EventBridge Scheduler's CreateSchedule that the retry scheduler sends. */
export interface CreateScheduleInput {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone: string;
  FlexibleTimeWindow: { Mode: 'OFF' };
  ActionAfterCompletion: 'DELETE';
  Target: {
    Arn: string;
    RoleArn: string;
    Input: string;
    RetryPolicy: { MaximumRetryAttempts: number; MaximumEventAgeInSeconds: number };
    DeadLetterConfig: { Arn: string };
  };
}

/** Creates one-time schedules; a name that exists already is an error named `ConflictException`. */
export interface ScheduleApi {
  create(input: CreateScheduleInput): Promise<void>;
}

/**
 * CreateSchedule as one signed REST-JSON request (`POST /schedules/{Name}`) on the Scheduler
 * API (shared/aws/aws-call.ts, built with SCHEDULER), instead of `@aws-sdk/client-scheduler`:
 * the consumer needs this one call, only for retries more than 15 minutes out.
 */
export class HttpScheduleApi implements ScheduleApi {
  constructor(private readonly scheduler: AwsApi) {}

  async create(input: CreateScheduleInput): Promise<void> {
    const { Name, ...fields } = input;
    // One token for every attempt: a retry of a create that did land is not a second schedule.
    await this.scheduler.call({ operation: 'CreateSchedule', path: `/schedules/${encodeURIComponent(Name)}`, input: { ...fields, ClientToken: randomUUID() } });
  }
}
