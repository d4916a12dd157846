import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deadLetterQueue } from './dead-letter-queue';

export interface AlarmsProps {
  httpApi: HttpApi;
  functions: { id: string; fn: IFunction }[];
  deadLetterQueues: Queue[];
  deliveryQueue: Queue;
  /** The voice platform's calls: a message that waits long means ingest is not consuming at all. */
  ingestQueue: Queue;
  /** The table stream's consumer: its IteratorAge says how far behind the stream it is. */
  streamConsumer: IFunction;
  /** The delivery queue's consumer and its timeout: a run near the timeout is about to be cut off. */
  queueConsumer: { fn: IFunction; timeout: Duration };
  table: ITableV2;
  /** The sweeper, scheduled every minute: the safety net behind every lost wake-up. */
  sweeper: IFunction;
  alarmEmail?: string;
  /**
   * Errors and throttles alarmed per function (2 billed alarm metrics each) instead of on Lambda's
   * two account-wide metrics, which also count other functions of the account and Region.
   */
  perFunctionAlarms: boolean;
}

const FIVE_MINUTES = Duration.minutes(5);

/** What operators are paged for, all on one SNS topic. Thresholds and what to do: docs/operations.md. */
export class Alarms extends Construct {
  readonly topic: Topic;
  readonly #action: SnsAction;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = this.#topicForCloudWatch();
    this.#action = new SnsAction(this.topic);
    const emailDlq = props.alarmEmail ? this.#emailTo(props.alarmEmail) : [];
    this.#deadLetterAlarms([...props.deadLetterQueues, ...emailDlq]);
    this.#pipelineAlarms(props);
    this.#apiAndTableAlarms(props);
    this.#lambdaAlarms(props);
  }

  #topicForCloudWatch(): Topic {
    const topic = new Topic(this, 'Topic', { displayName: 'Shop Calls API alarms', enforceSSL: true });
    // A topic policy replaces SNS's default one, and enforceSSL writes a policy holding only its
    // Deny: without this Allow, CloudWatch could not publish and every alarm would reach no one.
    const stack = Stack.of(this);
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccount',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    return topic;
  }

  /**
   * Notifications SNS could not email (a bounced or unconfirmed address) are kept 14 days, and
   * alarmed like every DLQ.
   */
  #emailTo(address: string): Queue[] {
    const emailDlq = deadLetterQueue(this, 'EmailDlq');
    this.topic.addSubscription(new EmailSubscription(address, { deadLetterQueue: emailDlq }));
    return [emailDlq];
  }

  #alarm(name: string, metric: IMetric, threshold: number, description: string, evaluationPeriods = 1): void {
    new Alarm(this, name, {
      metric,
      threshold,
      evaluationPeriods,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    }).addAlarmAction(this.#action);
  }

  #deadLetterAlarms(deadLetterQueues: Queue[]): void {
    for (const [i, q] of deadLetterQueues.entries()) {
      this.#alarm(
        `DeadLetters${i}`,
        q.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        1,
        `Messages in ${q.node.id}: something failed and was set aside; inspect, fix, then ` +
          `redrive (docs/operations.md).`,
      );
    }
  }

  /** The event pipeline: ingest, stream, queue, consumer and the sweeper behind them. */
  #pipelineAlarms(props: AlarmsProps): void {
    this.#alarm(
      'OldestDelivery',
      props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      900,
      'Deliveries wait over 15 minutes: the consumer is capped or failing.',
    );
    // Failing calls leave the queue for its DLQ within 5 receives (5 minutes); older ones are not
    // being received at all.
    this.#alarm(
      'OldestIngestCall',
      props.ingestQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      900,
      'Calls from the voice platform wait over 15 minutes: the ingest function is not consuming ' +
        'its queue (throttled, failing to start, or its event source disabled).',
    );
    this.#alarm(
      'StreamIteratorAge',
      props.streamConsumer.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum' }),
      60_000,
      'The fan-out is over a minute behind the table stream: new events reach receivers late ' +
        '(records older than 24 h are dropped to its DLQ).',
    );
    const timeoutMs = props.queueConsumer.timeout.toMilliseconds();
    this.#alarm(
      'ConsumerNearTimeout',
      props.queueConsumer.fn.metricDuration({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      Math.round(timeoutMs * 0.8),
      `The delivery consumer ran over 80% of its ${timeoutMs / 1000} s timeout: a batch cut off ` +
        `is retried whole after the visibility timeout.`,
    );
    // The one alarm on something missing: with the sweeper stopped, a lost message or schedule is never noticed.
    new Alarm(this, 'SweeperStopped', {
      metric: props.sweeper.metricInvocations({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 2,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.BREACHING,
      alarmDescription:
        'The sweeper has not run for 10 minutes: overdue deliveries whose message or schedule ' +
        'was lost are not being found (its schedule is disabled or deleted, or the function ' +
        'cannot be invoked).',
    }).addAlarmAction(this.#action);
  }

  #apiAndTableAlarms(props: AlarmsProps): void {
    this.#alarm(
      'Api5xx',
      props.httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      5,
      'The API answered 5xx at least 5 times in 5 minutes.',
    );
    this.#alarm(
      'ApiLatency',
      props.httpApi.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
      2000,
      'API p99 latency over 2 s for 15 minutes.',
      3,
    );
    for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
      const metric = new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: props.table.tableName },
        period: FIVE_MINUTES,
        statistic: 'Sum',
      });
      this.#alarm(
        `Table${metricName}`,
        metric,
        1,
        `The table throttled requests (${metricName}): on-demand capacity is ramping or a key is hot.`,
      );
    }
  }

  #lambdaAlarms(props: AlarmsProps): void {
    if (props.perFunctionAlarms) {
      for (const { id: fnId, fn } of props.functions) {
        this.#alarm(
          `${fnId}Errors`,
          fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
          1,
          `${fnId} threw errors.`,
        );
        this.#alarm(
          `${fnId}Throttles`,
          fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
          1,
          `${fnId} was throttled.`,
        );
      }
    } else {
      // CloudWatch bills an alarm per metric it reads, a metric-math alarm included, so one alarm per
      // metric is the floor: Lambda's metrics without a FunctionName (every function of the account
      // in this Region) cover all of this stack's functions for 2 alarm metrics instead of 2 each.
      this.#alarm(
        'LambdaErrors',
        LambdaFunction.metricAllErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        1,
        'A Lambda function of this account and Region threw errors (timeouts and failed starts included): ' +
          'which one, docs/operations.md, Observability (AWS).',
      );
      this.#alarm(
        'LambdaThrottles',
        LambdaFunction.metricAllThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        1,
        'A Lambda function of this account and Region was throttled: ' +
          'which one, docs/operations.md, Observability (AWS).',
      );
    }
  }
}
