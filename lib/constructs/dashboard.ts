import { Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Dashboard, GraphWidget, Metric, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  CIRCUIT_CLOSED,
  CIRCUIT_OPENED,
  DELIVERY_LATENCY,
  DELIVERY_NO_RESPONSE,
  METRICS_NAMESPACE,
  VERDICT_METRICS,
} from '../../shared/observability/delivery-metrics';

export interface ServiceDashboardProps {
  httpApi: HttpApi;
  deliveryQueue: Queue;
  fanout: IFunction;
  consumer: IFunction;
  table: ITableV2;
}

/** One page for the service: API traffic, the delivery pipeline's lag, delivery outcomes (EMF), the table. */
export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    const period = Duration.minutes(1);
    const custom = (metricName: string, statistic = 'Sum'): IMetric =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: Stack.of(this).stackName },
        period,
        statistic,
      });
    const table = (metricName: string) =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: props.table.tableName },
        period,
        statistic: 'Sum',
      });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 8 });

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      graph('API requests and errors', [
        props.httpApi.metricCount({ period }),
        props.httpApi.metricClientError({ period }),
        props.httpApi.metricServerError({ period }),
      ]),
      graph('API latency (p50, p99)', [
        props.httpApi.metricLatency({ period, statistic: 'p50' }),
        props.httpApi.metricLatency({ period, statistic: 'p99' }),
      ]),
      graph('Table throttles', [table('ReadThrottleEvents'), table('WriteThrottleEvents')]),
    );
    this.dashboard.addWidgets(
      graph('Fan-out lag (IteratorAge max)', [props.fanout.metric('IteratorAge', { period, statistic: 'Maximum' })]),
      graph(
        'Delivery queue',
        [props.deliveryQueue.metricApproximateNumberOfMessagesVisible({ period })],
        [props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period })],
      ),
      graph('Consumer duration (max)', [props.consumer.metricDuration({ period, statistic: 'Maximum' })]),
    );
    this.dashboard.addWidgets(
      graph(
        'Delivery outcomes',
        [
          VERDICT_METRICS.delivered,
          VERDICT_METRICS.retry_scheduled,
          VERDICT_METRICS.failed,
          VERDICT_METRICS.circuit_open,
          VERDICT_METRICS.deferred,
        ].map((m) => custom(m)),
      ),
      graph(
        'Receiver latency (p50, p99) and no-response',
        [custom(DELIVERY_LATENCY, 'p50'), custom(DELIVERY_LATENCY, 'p99')],
        [custom(DELIVERY_NO_RESPONSE)],
      ),
      graph('Circuits opened / closed', [custom(CIRCUIT_OPENED), custom(CIRCUIT_CLOSED)]),
    );
  }
}
