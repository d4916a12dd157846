import { median, mostInOneSecond, percentile, spreadOf, withSpread } from '../../bench/lib/stats';

describe('benchmark statistics (bench/lib/stats.ts)', () => {
  it('takes the median of an odd count as its middle sample, of an even count as the mean of the two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('leaves the samples it is given unsorted', () => {
    const xs = [3, 1, 2];
    median(xs);
    spreadOf(xs);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('gives the nearest-rank percentile', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
  });

  it('spreads per-round figures into median, range and quartiles', () => {
    expect(spreadOf([1.3, 1.1, 1.2, 1.5, 1.0])).toEqual({
      rounds: 5,
      median: 1.2,
      min: 1.0,
      max: 1.5,
      q1: 1.1,
      q3: 1.3,
    });
  });

  it('prints the median with its range, or with its quartiles', () => {
    const s = spreadOf([1.3, 1.1, 1.2, 1.5, 1.0]);
    const x = (v: number) => v.toFixed(2);
    expect(withSpread(s, x, '×')).toBe('1.20× (1.00–1.50×, 5 rounds)');
    expect(withSpread(s, x, '×', 'iqr')).toBe('1.20× (IQR 1.10–1.30×, 5 rounds)');
  });

  it('counts the most receipts in any closed one-second window', () => {
    expect(mostInOneSecond([0, 400, 800, 1000, 1001, 2500])).toBe(4);
    expect(mostInOneSecond([])).toBe(0);
  });
});
