import { emfSink } from '../../shared/observability/emf';

/** The EMF lines are the ones Powertools Metrics wrote (checked against 2.35.0 when it was replaced). */
describe('EMF metric lines', () => {
  const sink = () => {
    const lines: Record<string, unknown>[] = [];
    return { lines, metrics: emfSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>), () => 1_790_000_000_000, 'shop-calls-api') };
  };

  it('writes one line per flush: namespace, the service dimension, each metric once with its unit, repeated values as an array', () => {
    const { lines, metrics } = sink();
    metrics.count('DeliverySucceeded');
    metrics.milliseconds('DeliveryLatency', 42);
    metrics.count('DeliverySucceeded');
    metrics.milliseconds('DeliveryLatency', 7.5);
    metrics.count('DeliveryError', 3);
    metrics.flush();
    expect(lines).toEqual([
      {
        _aws: {
          Timestamp: 1_790_000_000_000,
          CloudWatchMetrics: [
            {
              Namespace: 'ShopCallsApi',
              Dimensions: [['service']],
              Metrics: [
                { Name: 'DeliverySucceeded', Unit: 'Count' },
                { Name: 'DeliveryLatency', Unit: 'Milliseconds' },
                { Name: 'DeliveryError', Unit: 'Count' },
              ],
            },
          ],
        },
        service: 'shop-calls-api',
        DeliverySucceeded: [1, 1],
        DeliveryLatency: [42, 7.5],
        DeliveryError: 3,
      },
    ]);
  });

  it('writes nothing when nothing was counted, and starts afresh after a flush', () => {
    const { lines, metrics } = sink();
    metrics.flush();
    expect(lines).toHaveLength(0);
    metrics.count('CircuitOpened');
    metrics.flush();
    metrics.flush();
    metrics.count('CircuitClosed');
    metrics.flush();
    expect(lines.map((l) => Object.keys(l).filter((k) => k !== '_aws' && k !== 'service'))).toEqual([['CircuitOpened'], ['CircuitClosed']]);
  });

  it('flushes a metric early at 100 values, as CloudWatch takes no more in one line', () => {
    const { lines, metrics } = sink();
    for (let i = 0; i < 102; i++) metrics.milliseconds('DeliveryLatency', i);
    metrics.flush();
    expect(lines.map((l) => (l.DeliveryLatency as number[]).length)).toEqual([100, 2]);
    expect(lines[1]?.DeliveryLatency).toEqual([100, 101]);
  });

  it('refuses one name with two units', () => {
    const { metrics } = sink();
    metrics.count('DeliveryLatency');
    expect(() => metrics.milliseconds('DeliveryLatency', 1)).toThrow(/unit/);
  });

  it('goes to stdout as one line by default', () => {
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const metrics = emfSink();
      metrics.count('DeliveryDuplicate');
      metrics.flush();
      expect(spy).toHaveBeenCalledTimes(1);
      const line = String(spy.mock.calls[0]?.[0]);
      expect(line.endsWith('}\n')).toBe(true);
      expect(JSON.parse(line)).toMatchObject({ service: 'shop-calls-api', DeliveryDuplicate: 1 });
    } finally {
      spy.mockRestore();
    }
  });
});
