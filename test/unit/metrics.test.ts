import { makeHandler } from '../../functions/deliver';
import type { AttemptDeps } from '../../shared/delivery/ports';
import { powertoolsMetrics } from '../../shared/observability/metrics';

/**
 * What we configure on Powertools Metrics (shared/observability/metrics.ts) and when the
 * consumer flushes it: the EMF lines the stack's dashboard reads (namespace ShopCallsApi, one
 * dimension `service`, units), one per invocation of the consumer.
 */

type Emf = Record<string, unknown> & {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
};

/** The EMF lines written to stdout while `body` runs. */
async function emfLines(body: () => Promise<void> | void): Promise<Emf[]> {
  const lines: Emf[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    const parsed = JSON.parse(String(chunk)) as Record<string, unknown>;
    if ('_aws' in parsed) lines.push(parsed as Emf);
    return true;
  });
  try {
    await body();
  } finally {
    spy.mockRestore();
  }
  return lines;
}

/** Just enough of the consumer's ports for messages whose delivery is gone: each attempt ends `missing`. */
const goneDeliveries = {
  deliveries: {
    readForAttempts: () =>
      Promise.resolve({ delivery: () => undefined, event: () => undefined, endpoint: () => undefined }),
  },
  now: () => new Date(),
} as unknown as AttemptDeps;
const sqsEvent = (...ids: string[]) =>
  ({
    Records: ids.map((id) => ({
      messageId: id,
      body: JSON.stringify({
        delivery_id: `dlv_${id}`,
        shop_id: 'shop_1',
        event_id: 'evt_1',
        endpoint_id: 'we_1',
        attempt: 1,
      }),
    })),
  }) as never;

describe('consumer metrics (Powertools Metrics)', () => {
  it('writes one line per flush: namespace ShopCallsApi, the service dimension, each metric with its unit, repeated values as an array', async () => {
    const lines = await emfLines(() => {
      const metrics = powertoolsMetrics();
      metrics.count('DeliverySucceeded');
      metrics.milliseconds('DeliveryLatency', 42);
      metrics.count('DeliverySucceeded');
      metrics.milliseconds('DeliveryLatency', 7.5);
      metrics.count('DeliveryError', 3);
      metrics.flush();
    });
    expect(lines).toHaveLength(1);
    const [line] = lines as [Emf];
    expect(line._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'ShopCallsApi',
        Dimensions: [['service']],
        Metrics: [
          { Name: 'DeliverySucceeded', Unit: 'Count' },
          { Name: 'DeliveryLatency', Unit: 'Milliseconds' },
          { Name: 'DeliveryError', Unit: 'Count' },
        ],
      },
    ]);
    const { _aws, ...values } = line;
    expect(values).toEqual({
      service: 'shop-calls-api',
      DeliverySucceeded: [1, 1],
      DeliveryLatency: [42, 7.5],
      DeliveryError: 3,
    });
  });

  it('refuses one name with two units', () => {
    const metrics = powertoolsMetrics();
    metrics.count('DeliveryLatency');
    expect(() => metrics.milliseconds('DeliveryLatency', 1)).toThrow(/unit/);
  });

  it("writes the consumer's numbers once per invocation, each line holding only that invocation's", async () => {
    const lines = await emfLines(async () => {
      const handler = makeHandler(() => goneDeliveries, powertoolsMetrics());
      expect(await handler(sqsEvent('m1', 'm2'))).toEqual({ batchItemFailures: [] });
      expect(await handler(sqsEvent('m3'))).toEqual({ batchItemFailures: [] });
    });
    expect(lines.map(({ _aws, ...values }) => values)).toEqual([
      { service: 'shop-calls-api', DeliveryMissing: [1, 1] },
      { service: 'shop-calls-api', DeliveryMissing: 1 },
    ]);
  });
});
