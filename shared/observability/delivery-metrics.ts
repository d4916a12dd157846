import type { AttemptVerdict } from '../delivery/attempt-verdict';
import type { AttemptDeps } from '../delivery/ports';

/** The namespace of every custom metric; the stack's alarms and dashboard read the same. */
export const METRICS_NAMESPACE = 'ShopCallsApi';

/** Where the consumer's numbers go: Powertools Metrics (CloudWatch EMF) in Lambda (./metrics.ts), nowhere locally. */
export interface MetricSink {
  count(name: string, value?: number): void;
  milliseconds(name: string, value: number): void;
  /** Writes what the invocation counted: once, at its end. */
  flush(): void;
}

export const NO_METRICS: MetricSink = { count: () => undefined, milliseconds: () => undefined, flush: () => undefined };

/**
 * The metric names (namespace ShopCallsApi), one per verdict of an attempt, so alarms and the
 * dashboard need no dimensions.
 */
export const VERDICT_METRICS: Record<AttemptVerdict, string> = {
  delivered: 'DeliverySucceeded',
  retry_scheduled: 'DeliveryRetryScheduled',
  failed: 'DeliveryFailed',
  circuit_open: 'DeliveryCircuitOpenSkipped',
  deferred: 'DeliveryDeferred',
  waiting_for_rate: 'DeliveryWaitingForRate',
  left_due: 'DeliveryLeftDue',
  in_flight: 'DeliveryInFlightElsewhere',
  cancelled: 'DeliveryCancelled',
  duplicate: 'DeliveryDuplicate',
  missing: 'DeliveryMissing',
};
export const DELIVERY_LATENCY = 'DeliveryLatency';
export const DELIVERY_SENT = 'DeliveryAttemptSent';
export const DELIVERY_NO_RESPONSE = 'DeliveryNoResponse';
export const CIRCUIT_OPENED = 'CircuitOpened';
export const CIRCUIT_CLOSED = 'CircuitClosed';

/**
 * The consumer's ports, observed: every request to a receiver (its latency, and whether an
 * answer came at all) and every circuit change at an attempt's end. The attempt logic itself stays
 * as it is; only what passes through its ports is counted.
 */
export function withDeliveryMetrics(deps: AttemptDeps, sink: MetricSink): AttemptDeps {
  return {
    ...deps,
    sender: {
      post: async (url, headers, body) => {
        const result = await deps.sender.post(url, headers, body);
        sink.count(DELIVERY_SENT);
        sink.milliseconds(DELIVERY_LATENCY, result.durationMs);
        if (result.status === null) sink.count(DELIVERY_NO_RESPONSE);
        return result;
      },
    },
    ledger: {
      recordInRun: (delivery, update) => deps.ledger.recordInRun(delivery, update),
      releaseCarried: (endpoint, carried) => deps.ledger.releaseCarried(endpoint, carried),
      finish: async (end) => {
        const finished = await deps.ledger.finish(end);
        const { change } = end;
        if (change.opens) sink.count(CIRCUIT_OPENED);
        else if (
          change.succeeded &&
          finished.released.circuitBefore !== null &&
          finished.released.circuitBefore !== 'closed'
        )
          sink.count(CIRCUIT_CLOSED);
        return finished;
      },
    },
  };
}

/** One count per settled attempt by its verdict; a rejected one (the table or queue failed) is DeliveryError. */
export function countVerdicts(results: PromiseSettledResult<AttemptVerdict>[], sink: MetricSink): void {
  for (const result of results)
    sink.count(result.status === 'fulfilled' ? VERDICT_METRICS[result.value] : 'DeliveryError');
}
