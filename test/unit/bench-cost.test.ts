import { LOCAL_ONLY_SQS, opsPerDelivery, REFERENCES, stageCost, totalCost } from '../../bench/lib/cost';
import type { OpTally } from '../../bench/lib/instrument';

const tally = (requests: number, units: number, items = requests): OpTally => ({ requests, items, units, estimated: 0 });

describe('benchmark cost arithmetic (bench/lib/cost.ts)', () => {
  // Ten deliveries in one batch: one BatchGetItem (5 read units), ten updates (1 write unit each),
  // a receive and a delete (one 64 KB chunk each) and the local poller's attribute read, 100 ms at 256 MB.
  const consumer = stageCost(
    {
      name: 'consumer',
      table: new Map([['BatchGetItem', tally(1, 5, 10)], ['UpdateItem', tally(10, 10)]]),
      sqs: new Map([['ReceiveMessage', tally(1, 1)], ['DeleteMessageBatch', tally(1, 1)], ['GetQueueAttributes', tally(1, 1)]]),
      lambda: { tally: { invocations: 1, records: 10, ms: 99.6, billedMs: 100 }, memoryMb: 256 },
    },
    10,
  );

  it('counts requests and units per delivery, writes and reads apart', () => {
    expect(consumer.tableRequests).toBeCloseTo(1.1);
    expect(consumer.writeUnits).toBeCloseTo(1);
    expect(consumer.readUnits).toBeCloseTo(0.5);
    expect(consumer.invocations).toBeCloseTo(0.1);
    expect(consumer.lambdaMs).toBeCloseTo(9.96);
  });

  it('bills SQS by chunk and leaves out what only the local poller asks', () => {
    expect(LOCAL_ONLY_SQS.has('GetQueueAttributes')).toBe(true);
    expect(consumer.sqsRequests).toBeCloseTo(0.3);
    expect(consumer.sqsBilled).toBeCloseTo(0.2);
  });

  it('prices a million deliveries at the list prices', () => {
    // 1 WRU × $0.625 + 0.5 RRU × $0.125; 0.2 requests × $0.40; 0.1 invocations × $0.20 + 0.0025 GB-s × 1e6 × $0.0000133334.
    expect(consumer.gbSeconds).toBeCloseTo(0.0025, 6);
    expect(consumer.perMillion.table).toBeCloseTo(0.6875, 6);
    expect(consumer.perMillion.sqs).toBeCloseTo(0.08, 6);
    expect(consumer.perMillion.lambda).toBeCloseTo(0.0533335, 6);
    expect(consumer.perMillion.total).toBeCloseTo(0.8208335, 6);
  });

  it('adds stages up per delivery', () => {
    const fanout = stageCost({ name: 'fan-out', table: new Map([['BatchWriteItem', tally(1, 10, 10)]]), sqs: new Map([['SendMessageBatch', tally(1, 1, 10)]]) }, 10);
    const total = totalCost('total', [consumer, fanout]);
    expect(total.writeUnits).toBeCloseTo(2);
    expect(total.sqsBilled).toBeCloseTo(0.3);
    expect(total.perMillion.total).toBeCloseTo(consumer.perMillion.total + 0.625 + 0.04, 6);
  });

  it('lists requests per delivery by operation, busiest first', () => {
    expect(opsPerDelivery(new Map([['BatchGetItem', tally(1, 5)], ['UpdateItem', tally(10, 10)]]), 10)).toBe('UpdateItem 1.00, BatchGetItem 0.10');
    expect(opsPerDelivery(undefined, 10)).toBe('none');
  });

  it('prices the managed alternatives per million', () => {
    expect(REFERENCES.map((r) => r.perMillion)).toEqual([0.2, 1.2, 1]);
  });
});
