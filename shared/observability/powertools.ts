import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, type MetricSink } from './delivery-metrics';

/**
 * Powertools Metrics as a sink: numbers are buffered during an invocation and written as one
 * CloudWatch Embedded Metric Format log line when `flush` runs (no API call, no extra latency).
 */
export function emfSink(): MetricSink & { flush(): void } {
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'shop-calls-api' });
  return {
    count: (name, value = 1) => metrics.addMetric(name, MetricUnit.Count, value),
    milliseconds: (name, value) => metrics.addMetric(name, MetricUnit.Milliseconds, value),
    flush: () => metrics.publishStoredMetrics(),
  };
}
