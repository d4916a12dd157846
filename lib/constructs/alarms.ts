import { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, TreatMissingData, type Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface AlarmsProps {
  httpApi: HttpApi;
  functions: { id: string; fn: IFunction }[];
  deadLetterQueues: Queue[];
  deliveryQueue: Queue;
  alarmEmail?: string;
}

/** What operators are paged for, all on one SNS topic. */
export class Alarms extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { displayName: 'Shop Calls API alarms', enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.topic);
    const alarm = (name: string, metric: Metric, threshold: number, description: string) =>
      new Alarm(this, name, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      }).addAlarmAction(action);

    for (const [i, q] of props.deadLetterQueues.entries()) {
      alarm(`DeadLetters${i}`, q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }), 1, `Messages in ${q.node.id}: something failed repeatedly; inspect, fix, then redrive.`);
    }
    alarm(
      'OldestDelivery',
      props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
      900,
      'Deliveries wait over 15 minutes: the consumer is capped or failing.',
    );
    alarm('Api5xx', props.httpApi.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }), 5, 'The API answered 5xx at least 5 times in 5 minutes.');
    for (const { id: fnId, fn } of props.functions) {
      alarm(`${fnId}Errors`, fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }), 1, `${fnId} threw errors.`);
      alarm(`${fnId}Throttles`, fn.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }), 1, `${fnId} was throttled.`);
    }
  }
}
