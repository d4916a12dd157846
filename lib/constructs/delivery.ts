import { Aws, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import type { ITable, ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, RecursiveLoop, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FANOUT_FILTER_PATTERNS } from '../../shared/stream-filters';
import type { ServiceConfig } from '../config';
import { CONSUMER_TIMEOUT_SECONDS } from '../limits';
import { deadLetterQueue } from './dead-letter-queue';
import { PIPELINE_FUNCTIONS } from './entries';
import { ServiceFunction, pipelineSystemLogLevel, pipelineTracing } from './function';
import { grantOpenSecrets } from './secrets-key';

export interface DeliveryProps {
  table: ITableV2;
  secretsKey: IKey;
  config: ServiceConfig;
  logRetention: RetentionDays;
}

const CONSUMER_TIMEOUT = Duration.seconds(CONSUMER_TIMEOUT_SECONDS);

/** What every function of the pipeline is given. */
type Common = {
  logRetention: RetentionDays;
  logLevel: ServiceConfig['logLevel'];
  sourceMaps: boolean;
  tracing: ReturnType<typeof pipelineTracing>;
};

/**
 * SES authorizes SendEmail on every identity the message uses: the sender's address identity
 * or its domain identity (whichever is verified), and in the SES sandbox the recipients'
 * too. So the grant is on the account's identities, limited by condition to this sender.
 */
function grantSendEmail(fn: ServiceFunction, sender: string): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['ses:SendEmail'],
      resources: [Stack.of(fn).formatArn({ service: 'ses', resource: 'identity', resourceName: '*' })],
      conditions: { StringEquals: { 'ses:FromAddress': sender } },
    }),
  );
  Validations.of(fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${renderedArnPrefix(Stack.of(fn), 'ses')}:identity/*]`,
    reason:
      'SES checks SendEmail against the address or domain identity of the sender and, in the ' +
      'sandbox, of each recipient; the statement is limited to this sender by ses:FromAddress.',
  });
}

/**
 * Event delivery: table stream → fan-out → SQS → consumer → receivers; retries beyond 15
 * minutes through one-time EventBridge Scheduler schedules. Every asynchronous hop has a
 * dead-letter queue or an on-failure destination.
 */
export class Delivery extends Construct {
  readonly queue: Queue;
  /** Owner emails, from the fan-out to the notify function. */
  readonly notifyQueue: Queue;
  readonly deadLetterQueues: Queue[];
  /** Where a delivery message goes after 5 receives; the sweeper drains it into the due index. */
  readonly deliveryDeadLetterQueue: Queue;
  readonly functions: ServiceFunction[];
  /** The stream's consumer (its IteratorAge is alarmed) and the queue's (its duration against its timeout). */
  readonly fanout: ServiceFunction;
  readonly consumer: ServiceFunction;
  readonly consumerTimeout = CONSUMER_TIMEOUT;
  readonly schedulerRole: Role;

  constructor(scope: Construct, id: string, props: DeliveryProps) {
    super(scope, id);
    const { config } = props;
    const common: Common = {
      logRetention: props.logRetention,
      logLevel: config.logLevel,
      sourceMaps: config.sourceMaps,
      tracing: pipelineTracing(config),
    };
    const dlq = (name: string) => deadLetterQueue(this, name);

    const deliveryDlq = dlq('DeliveryDlq');
    const streamDlq = dlq('FanoutFailures');
    const schedulerDlq = dlq('SchedulerDlq');
    const notifyDlq = dlq('NotifyDlq');
    this.deadLetterQueues = [deliveryDlq, streamDlq, schedulerDlq, notifyDlq];
    this.deliveryDeadLetterQueue = deliveryDlq;

    this.queue = new Queue(this, 'Deliveries', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // At least 6 × the consumer timeout, so a batch still running is never handed out twice.
      visibilityTimeout: Duration.seconds(CONSUMER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: deliveryDlq, maxReceiveCount: 5 },
    });

    const { group, role } = this.#retrySchedules(schedulerDlq);
    this.schedulerRole = role;
    const { notify, notifyQueue } = this.#ownerEmails(props, common, notifyDlq);
    this.notifyQueue = notifyQueue;
    const fanout = this.#fanout(props, common, streamDlq);
    const consumer = this.#consumer(props, common, { group, schedulerRole: role, schedulerDlq });
    this.functions = [fanout, consumer, notify];
    this.fanout = fanout;
    this.consumer = consumer;
  }

  /** The schedule group of retries beyond 15 minutes, and the role its schedules send with. */
  #retrySchedules(schedulerDlq: Queue): { group: CfnScheduleGroup; role: Role } {
    const group = new CfnScheduleGroup(this, 'Retries', { name: `${Stack.of(this).stackName}-delivery-retries` });
    // Scheduler may do one thing: put a message on the delivery queue (and on its own DLQ).
    const role = new Role(this, 'SchedulerRole', {
      // Only schedules of this account's retry group may assume it (the confused-deputy guard).
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID, 'aws:SourceArn': group.attrArn } },
      }),
      description: 'EventBridge Scheduler: put delivery retries on the delivery queue',
    });
    role.addToPolicy(
      new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn, schedulerDlq.queueArn] }),
    );

    return { group, role };
  }

  #ownerEmails(props: DeliveryProps, common: Common, notifyDlq: Queue) {
    const { table, config } = props;
    // Owner emails: their own queue and function, so a refused email never holds a stream record.
    const notifyQueue = new Queue(this, 'OwnerEmails', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(60 * 6),
      deadLetterQueue: { queue: notifyDlq, maxReceiveCount: 5 },
    });
    const notify = new ServiceFunction(this, 'Notify', {
      ...common,
      entry: PIPELINE_FUNCTIONS.Notify,
      description: 'Emails shop owners (webhook endpoint disabled)',
      timeout: Duration.seconds(60),
    });
    notify.bindTable(table, false); // reads the event, shop and endpoint; claims the email on the event
    if (config.senderEmail) {
      notify.addEnvironment('SES_FROM_ADDRESS', config.senderEmail);
      grantSendEmail(notify, config.senderEmail);
    }
    notify.addEventSource(
      new SqsEventSource(notifyQueue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 2 }),
    );
    Validations.of(notify).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        'SQS event sources take no on-failure destination: an email that keeps failing moves to ' +
        "NotifyDlq by the queue's redrive policy (5 receives), which an alarm watches.",
    });

    return { notify, notifyQueue };
  }

  /** The stream's consumer: delivery rows and queue messages for each event. */
  #fanout(props: DeliveryProps, common: Common, streamDlq: Queue): ServiceFunction {
    const { table, config } = props;
    const notifyQueue = this.notifyQueue;
    const fanout = new ServiceFunction(this, 'Fanout', {
      ...common,
      systemLogLevel: pipelineSystemLogLevel(config),
      entry: PIPELINE_FUNCTIONS.Fanout,
      description: 'Stream → delivery rows and queue messages',
      timeout: Duration.seconds(30),
    });
    fanout.bindTable(table, false);
    this.queue.grantSendMessages(fanout);
    fanout.addEnvironment('QUEUE_URL', this.queue.queueUrl);
    notifyQueue.grantSendMessages(fanout);
    fanout.addEnvironment('NOTIFY_QUEUE_URL', notifyQueue.queueUrl);
    fanout.addEventSource(
      new DynamoEventSource(table as unknown as ITable, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: 10,
        maxRecordAge: Duration.hours(24),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(streamDlq),
        filters: FANOUT_FILTER_PATTERNS.map((pattern) => FilterCriteria.filter(pattern as never)),
      }),
    );

    return fanout;
  }

  /** The queue's consumer: signs and POSTs, and schedules the retries. */
  #consumer(
    props: DeliveryProps,
    common: Common,
    retries: { group: CfnScheduleGroup; schedulerRole: Role; schedulerDlq: Queue },
  ): ServiceFunction {
    const { table, secretsKey, config } = props;
    const { group, schedulerRole, schedulerDlq } = retries;
    const consumer = new ServiceFunction(this, 'Deliver', {
      ...common,
      systemLogLevel: pipelineSystemLogLevel(config),
      entry: PIPELINE_FUNCTIONS.Deliver,
      description: 'Signs and POSTs webhook deliveries',
      timeout: CONSUMER_TIMEOUT,
      // It puts its own retries (and over-limit deferrals) back on the queue it reads, carrying the
      // trace header the SDK sends: Lambda's loop detection would stop a delivery's later attempts.
      recursiveLoop: RecursiveLoop.ALLOW,
      environment: {
        QUEUE_URL: this.queue.queueUrl,
        QUEUE_ARN: this.queue.queueArn,
        SCHEDULER_GROUP: group.ref,
        SCHEDULER_ROLE_ARN: schedulerRole.roleArn,
        SCHEDULER_DLQ_ARN: schedulerDlq.queueArn,
        DELIVERY_TIMEOUT_MS: String(config.deliveryTimeoutMs),
      },
    });
    consumer.bindTable(table, false);
    grantOpenSecrets(consumer, secretsKey);
    this.queue.grantSendMessages(consumer); // retries up to 15 minutes out
    // Schedules get generated names (<delivery>-a<attempt>), so the grant is every schedule of this one group.
    consumer.addToRolePolicy(
      new PolicyStatement({
        actions: ['scheduler:CreateSchedule'],
        resources: [
          Stack.of(this).formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${group.ref}/*` }),
        ],
      }),
    );
    consumer.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['iam:PassRole'],
        resources: [schedulerRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    // cdk-nag names the finding by the rendered ARN: pseudo parameters when the stack is environment-agnostic.
    const stack = Stack.of(this);
    const schedules = `${renderedArnPrefix(stack, 'scheduler')}:schedule/<${stack.getLogicalId(group)}>/*`;
    Validations.of(consumer).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${schedules}]`,
      reason: "Retry schedules have generated names; the grant is limited to the service's own schedule group.",
    });
    consumer.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: config.consumerMaxConcurrency,
      }),
    );
    Validations.of(consumer).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        'SQS event sources take no on-failure destination: a message that keeps failing moves to ' +
        "DeliveryDlq by the queue's redrive policy (5 receives), which an alarm watches.",
    });

    return consumer;
  }
}

/**
 * `arn:<partition>:<service>:<region>:<account>` as cdk-nag renders it in a finding's name:
 * pseudo parameters where the stack is environment-agnostic, literals where it is not (a known
 * region also fixes the partition).
 */
function renderedArnPrefix(stack: Stack, service: string): string {
  const shown = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
  const [partition, region, account] = [
    shown(stack.partition, 'Partition'),
    shown(stack.region, 'Region'),
    shown(stack.account, 'AccountId'),
  ];
  return `arn:${partition}:${service}:${region}:${account}`;
}
