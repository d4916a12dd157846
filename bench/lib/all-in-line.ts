/** The line bench/lib/cost.ts `printAllIn` prints, which `npm run bench` (bench/run-all.ts) adds up per regime. */
export const ALL_IN_LINE = /^All-in, (sparse|busy)[^:]*: \$([\d.]+) per million deliveries$/gm;

/** The contract's targets per million deliveries, all-in. */
const COST_TARGETS = { sparse: 5, busy: 2 } as const;

/**
 * Parts each regime is made of: sparse is delivery-latency's whole pipeline; busy is
 * fanout-cost's full stream batches plus delivery-throughput's consumer.
 */
const PARTS = { sparse: 1, busy: 2 } as const;

/**
 * From everything the benchmarks printed: the closing line of `npm run bench`, and the
 * verdict of each regime (not measured when a part is missing: a benchmark failed).
 */
export function closingCost(printed: string): { line: string; verdict: string } {
  const parts = { sparse: [] as number[], busy: [] as number[] };
  for (const m of printed.matchAll(ALL_IN_LINE)) parts[m[1] as keyof typeof parts].push(Number(m[2]));
  const total = (regime: keyof typeof parts) =>
    parts[regime].length === PARTS[regime] ? parts[regime].reduce((a, b) => a + b, 0) : null;
  const sparse = total('sparse');
  const busy = total('busy');
  const usd = (x: number | null) => (x === null ? 'not measured' : `$${x.toFixed(2)}`);
  const met = (x: number | null, target: number) => (x === null ? 'not measured' : x <= target ? 'met' : 'MISSED');
  return {
    line: `cost per million deliveries: sparse ${usd(sparse)}, busy ${usd(busy)} (targets: sparse <= $${COST_TARGETS.sparse.toFixed(2)}, busy <= $${COST_TARGETS.busy.toFixed(2)})`,
    verdict: `cost per million deliveries: sparse ${met(sparse, COST_TARGETS.sparse)}, busy ${met(busy, COST_TARGETS.busy)}`,
  };
}
