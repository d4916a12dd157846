import {
  allInParts,
  ALL_IN_LINE,
  LOCAL_ONLY_SQS,
  opsPerDelivery,
  printAllIn,
  REFERENCES,
  stageCost,
  totalCost,
  tracesFor,
} from '../../bench/lib/cost';
import { closingCost } from '../../bench/lib/all-in-line';
import { PLATFORM_BYTES_PER_INVOCATION, platformBytesPerInvocation } from '../../bench/lib/platform-logs';
import type { OpTally } from '../../bench/lib/instrument';

const tally = (requests: number, units: number, items = requests): OpTally => ({
  requests,
  items,
  units,
  estimated: 0,
});

describe('benchmark cost arithmetic (bench/lib/cost.ts)', () => {
  // Ten deliveries in one batch: one BatchGetItem (5 read units), ten updates (1 write unit each),
  // a receive and a delete (one 64 KB chunk each) and the local poller's attribute read, 100 ms at 256 MB.
  const consumer = stageCost(
    {
      name: 'consumer',
      table: new Map([
        ['BatchGetItem', tally(1, 5, 10)],
        ['UpdateItem', tally(10, 10)],
      ]),
      sqs: new Map([
        ['ReceiveMessage', tally(1, 1)],
        ['DeleteMessageBatch', tally(1, 1)],
        ['GetQueueAttributes', tally(1, 1)],
      ]),
      lambda: {
        tally: { invocations: 1, records: 10, ms: 99.6, billedMs: 100 },
        memoryMb: 256,
        systemLogLevel: 'WARN',
      },
      logs: { bytes: 3_000, lines: 10 },
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
    // 300 bytes a delivery × 1e6 = 0.2794 GiB × $0.50.
    expect(consumer.logBytes).toBeCloseTo(300);
    expect(consumer.perMillion.logs).toBeCloseTo((300e6 / 2 ** 30) * 0.5, 6);
    expect(consumer.perMillion.total).toBeCloseTo(0.8208335 + (300e6 / 2 ** 30) * 0.5, 6);
  });

  it("adds Lambda's own lines per invocation only at the INFO system log level", () => {
    const at = (systemLogLevel: 'INFO' | 'WARN') =>
      stageCost(
        {
          name: 'c',
          lambda: { tally: { invocations: 4, records: 4, ms: 4, billedMs: 4 }, memoryMb: 256, systemLogLevel },
        },
        2,
      ).logBytes;
    expect(at('WARN')).toBe(0);
    expect(at('INFO')).toBeCloseTo(2 * PLATFORM_BYTES_PER_INVOCATION);
    expect(platformBytesPerInvocation('INFO')).toBeGreaterThan(3 * 26);
  });

  it('counts traces only where a function traces actively (1 a second, then 5 %)', () => {
    expect(tracesFor('PassThrough', 1_000, 10)).toBe(0);
    expect(tracesFor('Active', 1_000, 10)).toBeCloseTo(10 + 0.05 * 990);
    expect(tracesFor('Active', 3, 10)).toBe(3);
  });

  it('prints the all-in line that npm run bench adds up, with X-Ray, KMS and Scheduler priced', () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    try {
      // 10 deliveries: 1 trace ($5/M), 2 KMS requests ($3/M), 1 schedule ($1/M) → +$0.5 + $0.6 + $0.1 per million.
      const all = printAllIn('busy consumer', consumer, { traces: 1, kmsRequests: 2, schedules: 1 }, 10);
      expect(all).toBeCloseTo(consumer.perMillion.total + 0.5 + 0.6 + 0.1, 6);
    } finally {
      log.mockRestore();
    }
    const found = [...lines.join('\n').matchAll(ALL_IN_LINE)].map((m) => [m[1], Number(m[2])]);
    expect(found).toEqual([['busy', Number((consumer.perMillion.total + 1.2).toFixed(3))]]);
  });

  it('prices the all-in parts without printing, as the line does', () => {
    const parts = allInParts(consumer, { traces: 1, kmsRequests: 2, schedules: 1 }, 10);
    expect(parts.xray).toBeCloseTo(0.5, 6);
    expect(parts.kms).toBeCloseTo(0.6, 6);
    expect(parts.scheduler).toBeCloseTo(0.1, 6);
    expect(parts.all).toBeCloseTo(consumer.perMillion.total + 1.2, 6);
  });

  it('adds stages up per delivery', () => {
    const fanout = stageCost(
      {
        name: 'fan-out',
        table: new Map([['BatchWriteItem', tally(1, 10, 10)]]),
        sqs: new Map([['SendMessageBatch', tally(1, 1, 10)]]),
      },
      10,
    );
    const total = totalCost('total', [consumer, fanout]);
    expect(total.writeUnits).toBeCloseTo(2);
    expect(total.sqsBilled).toBeCloseTo(0.3);
    expect(total.perMillion.total).toBeCloseTo(consumer.perMillion.total + 0.625 + 0.04, 6);
  });

  it('lists requests per delivery by operation, busiest first', () => {
    expect(
      opsPerDelivery(
        new Map([
          ['BatchGetItem', tally(1, 5)],
          ['UpdateItem', tally(10, 10)],
        ]),
        10,
      ),
    ).toBe('UpdateItem 1.00, BatchGetItem 0.10');
    expect(opsPerDelivery(undefined, 10)).toBe('none');
  });

  it('prices the managed alternatives per million', () => {
    expect(REFERENCES.map((r) => r.perMillion)).toEqual([0.2, 1.2, 1]);
  });
});

describe('the closing cost line of npm run bench (bench/lib/all-in-line.ts)', () => {
  const printed = [
    'All-in, sparse: $4.120 per million deliveries',
    'noise',
    'All-in, busy fan-out: $0.900 per million deliveries',
    'All-in, busy consumer: $1.300 per million deliveries',
  ].join('\n');

  it('adds the parts of each regime and judges them against the contract', () => {
    expect(closingCost(printed)).toEqual({
      line: 'cost per million deliveries: sparse $4.12, busy $2.20 (targets: sparse <= $5.00, busy <= $2.00)',
      verdict: 'cost per million deliveries: sparse met, busy MISSED',
    });
  });

  it('says a regime was not measured when one of its parts is missing', () => {
    expect(closingCost(printed.split('\n').slice(0, 3).join('\n')).line).toBe(
      'cost per million deliveries: sparse $4.12, busy not measured (targets: sparse <= $5.00, busy <= $2.00)',
    );
  });
});
