import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import type { IQueue, Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceConfig } from '../config';
import { deadLetterQueue } from './dead-letter-queue';
import { PIPELINE_FUNCTIONS } from './entries';
import { ServiceFunction, pipelineTracing } from './function';

export interface DeliverySweeperProps {
  table: ITableV2;
  /** The delivery queue the sweeper puts overdue deliveries back on. */
  queue: IQueue;
  /** The delivery queue's dead-letter queue: each message names a row the sweeper puts in the due index. */
  deliveryDeadLetters: IQueue;
  config: ServiceConfig;
  logRetention: RetentionDays;
}

const SWEEP_TIMEOUT = Duration.seconds(60);

/**
 * The safety net of delivery: every minute an EventBridge Scheduler schedule invokes the
 * sweeper, which puts the rows named by the delivery dead-letter queue's messages in the due
 * index, reads the due index (gsi2) for open deliveries whose time has passed or whose lease
 * expired, and puts them back on the delivery queue.
 */
export class DeliverySweeper extends Construct {
  readonly fn: ServiceFunction;
  readonly functions: ServiceFunction[];
  readonly deadLetterQueues: Queue[];
  readonly schedule: CfnSchedule;
  readonly scheduleRole: Role;

  constructor(scope: Construct, id: string, props: DeliverySweeperProps) {
    super(scope, id);
    const { table, queue, deliveryDeadLetters, config } = props;
    const stack = Stack.of(this);

    this.fn = new ServiceFunction(this, 'Sweep', {
      entry: PIPELINE_FUNCTIONS.Sweep,
      description: 'Every minute: overdue or abandoned deliveries (due index) back onto the delivery queue',
      logRetention: props.logRetention,
      logLevel: config.logLevel,
      sourceMaps: config.sourceMaps,
      timeout: SWEEP_TIMEOUT,
      // No reservation unless the operator asks (sweeperReservedConcurrency, docs/deploy.md): Lambda
      // refuses one that leaves fewer than 100 unreserved, which new accounts (quota 10 or 50) cannot
      // give. Correctness does not need one sweep at a time: every row change is a conditional write,
      // so a delivery swept by two overlapping runs is still attempted once.
      reservedConcurrentExecutions: config.sweeperReservedConcurrency,
      tracing: pipelineTracing(config),
      environment: {
        QUEUE_URL: queue.queueUrl,
        QUEUE_ARN: queue.queueArn,
        DELIVERY_DLQ_URL: deliveryDeadLetters.queueUrl,
        // Lease expiry: a delivery in flight longer than the request timeout was abandoned.
        DELIVERY_TIMEOUT_MS: String(config.deliveryTimeoutMs),
      },
    });
    this.fn.bindTable(table, false);
    queue.grantSendMessages(this.fn);
    // Drains the delivery dead-letter queue: receives and deletes, nothing else (no attributes, no
    // visibility changes, no purge).
    this.fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage'],
        resources: [deliveryDeadLetters.queueArn],
      }),
    );
    // Scheduler invokes asynchronously. A failed sweep is not retried (the next tick is the
    // retry) and a tick held back (throttled) is dropped after a minute, when the next one has
    // come: queued ticks would only run back to back.
    this.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    Validations.of(this.fn).acknowledge({
      id: 'Serverless-LambdaAsyncFailureDestination',
      reason:
        "A failed sweep is not retried or kept: the next minute's sweep reads the same rows. The " +
        'schedule has its own dead-letter queue for invocations that never start.',
    });

    const dlq = deadLetterQueue(this, 'SweepScheduleDlq');
    this.deadLetterQueues = [dlq];

    // May invoke the sweeper and nothing else (plus the dead-letter queue of its own schedule).
    // Inline, so the permissions exist before the schedule first fires.
    this.scheduleRole = new Role(this, 'ScheduleRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': Aws.ACCOUNT_ID,
            'aws:SourceArn': stack.formatArn({
              service: 'scheduler',
              resource: 'schedule-group',
              resourceName: 'default',
            }),
          },
        },
      }),
      description: 'EventBridge Scheduler: invoke the delivery sweeper',
      inlinePolicies: {
        InvokeSweeper: new PolicyDocument({
          statements: [
            new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.fn.functionArn] }),
            new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [dlq.queueArn] }),
          ],
        }),
      },
    });

    this.schedule = new CfnSchedule(this, 'EveryMinute', {
      description: 'Invokes the delivery sweeper',
      scheduleExpression: 'rate(1 minute)',
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: {
        arn: this.fn.functionArn,
        roleArn: this.scheduleRole.roleArn,
        // Retries cover a failed Invoke call only; a tick older than a minute is superseded.
        retryPolicy: { maximumRetryAttempts: 2, maximumEventAgeInSeconds: 60 },
        deadLetterConfig: { arn: dlq.queueArn },
      },
    });

    this.functions = [this.fn];
  }
}
