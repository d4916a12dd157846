import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { loggingFromEnv } from '../config';
import { logger } from '../logger';
import { METRICS_NAMESPACE, type MetricSink } from './delivery-metrics';

/**
 * The consumer's MetricSink as Powertools Metrics: numbers are stored during an invocation and
 * written as CloudWatch Embedded Metric Format lines on stdout by `flush` (no API call), in
 * namespace ShopCallsApi with the one dimension `service`, which the stack's dashboard reads.
 * Powertools' own warnings (a flush with nothing stored) go through the logger, as JSON lines.
 */
export function powertoolsMetrics(
  metrics: Metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: loggingFromEnv().serviceName, logger }),
): MetricSink {
  return {
    count: (name, value = 1) => void metrics.addMetric(name, MetricUnit.Count, value),
    milliseconds: (name, value) => void metrics.addMetric(name, MetricUnit.Milliseconds, value),
    flush: () => void metrics.publishStoredMetrics(),
  };
}
