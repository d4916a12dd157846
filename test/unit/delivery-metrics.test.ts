import type { AttemptDeps, AttemptEnd } from '../../shared/delivery/ports';
import { countVerdicts, withDeliveryMetrics, type MetricSink } from '../../shared/observability/delivery-metrics';

function recorder(): MetricSink & { seen: [string, number][] } {
  const seen: [string, number][] = [];
  return {
    seen,
    count: (name, value = 1) => seen.push([name, value]),
    milliseconds: (name, value) => seen.push([name, value]),
    flush: () => undefined,
  };
}

const health = {
  circuit: 'closed' as const,
  consecutive_failures: 0,
  last_success_at: null,
  last_failure_at: null,
  next_probe_at: null,
  probe_interval_ms: 0,
};

function fakeDeps(circuitBefore: 'closed' | 'open' | 'half_open', status: number | null): AttemptDeps {
  return {
    sender: {
      post: () =>
        Promise.resolve({
          status,
          error: status === null ? 'timeout' : null,
          retryAfterMs: null,
          durationMs: 42,
          snippet: null,
        }),
    },
    ledger: { finish: () => Promise.resolve({ recorded: true, released: { circuitBefore, backlog: false } }) },
  } as unknown as AttemptDeps;
}

const end = (change: AttemptEnd['change']): AttemptEnd => ({
  delivery: {} as never,
  update: {} as never,
  endpoint: {} as never,
  token: 't',
  change,
});

describe('delivery metrics', () => {
  it('counts each request to a receiver with its latency, and a missing answer', async () => {
    const sink = recorder();
    const deps = withDeliveryMetrics(fakeDeps('closed', null), sink);
    await deps.sender.post(new URL('https://r.test/'), {}, '{}');
    expect(sink.seen).toEqual([
      ['DeliveryAttemptSent', 1],
      ['DeliveryLatency', 42],
      ['DeliveryNoResponse', 1],
    ]);
  });

  it('counts a circuit opening, and closing on a success after it was open', async () => {
    const opened = recorder();
    await withDeliveryMetrics(fakeDeps('closed', 500), opened).ledger.finish(
      end({ succeeded: false, counted: true, opens: true, health }),
    );
    expect(opened.seen).toEqual([['CircuitOpened', 1]]);
    const closed = recorder();
    await withDeliveryMetrics(fakeDeps('half_open', 200), closed).ledger.finish(
      end({ succeeded: true, counted: false, opens: false, health }),
    );
    expect(closed.seen).toEqual([['CircuitClosed', 1]]);
    const steady = recorder();
    await withDeliveryMetrics(fakeDeps('closed', 200), steady).ledger.finish(
      end({ succeeded: true, counted: false, opens: false, health }),
    );
    expect(steady.seen).toEqual([]);
  });

  it('counts every settled attempt by its verdict, and a rejected one as DeliveryError', () => {
    const sink = recorder();
    countVerdicts(
      [
        { status: 'fulfilled', value: 'delivered' },
        { status: 'fulfilled', value: 'retry_scheduled' },
        { status: 'rejected', reason: new Error('table') },
      ],
      sink,
    );
    expect(sink.seen.map(([n]) => n)).toEqual(['DeliverySucceeded', 'DeliveryRetryScheduled', 'DeliveryError']);
  });
});
