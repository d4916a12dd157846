import fc from 'fast-check';
import { runOnce, type RunReport } from './run';
import { SimTable } from './table-stream';
import { workloadArb, workloadWithPauseArb, type Workload } from './workload';

export interface SimOptions {
  dynamodbEndpoint: string;
  /** The first seed; run i uses seed `from + i`. */
  from: number;
  runs: number;
  /** Stop starting runs after this (epoch ms); Infinity for none. */
  deadline: number;
  /** On a violation, let fast-check look for a smaller workload that still breaks the rule. */
  shrink: boolean;
  /** Print every run's trace (one seed), or only failing runs' (several). */
  trace: boolean;
  /** Each workload with a pause (`SimCase.pause`). */
  pause?: boolean;
  print: (line: string) => void;
}

export interface SimSummary {
  runs: number;
  deliveries: number;
  receipts: number;
  duplicates: number;
  kills: number;
  steps: number;
  failed: { seed: number; report: RunReport; workload: Workload }[];
}

/** A run to make: its seed, and the workload when it is pinned (a kept regression) rather than drawn from the seed. */
export interface SimCase {
  seed: number;
  workload?: Workload;
  /** Draws the seed's workload with a pause (`workloadWithPauseArb`). */
  pause?: boolean;
}

/**
 * One seed's run as a fast-check property. The scheduler is drawn first, so a pinned workload
 * (`fc.constant`) leaves the seed's interleaving as it was when the case was found.
 */
export async function runCase(
  c: SimCase,
  table: SimTable,
  opts: Pick<SimOptions, 'shrink' | 'trace'> & { verbose?: boolean },
): Promise<{ report: RunReport; workload: Workload }> {
  let last: { report: RunReport; workload: Workload } | undefined;
  let first: { report: RunReport; workload: Workload } | undefined;
  const workloads = c.workload ? fc.constant(c.workload) : c.pause ? workloadWithPauseArb : workloadArb;
  const property = fc.asyncProperty(fc.scheduler(), workloads, async (scheduler, workload) => {
    const report = await runOnce(workload, scheduler, { table, seed: c.seed, verbose: opts.verbose ?? false });
    last = { report, workload };
    first ??= last;
    if (report.violations.length > 0)
      throw new Error(report.violations.map((v) => `${v.rule}: ${v.detail}`).join('\n'));
  });
  const out = await fc.check(property, { seed: c.seed, numRuns: 1, endOnFailure: !opts.shrink });
  if (!first || !last)
    throw new Error(`seed ${c.seed} did not run: ${String(out.errorInstance)}`, { cause: out.errorInstance });
  // Shrinking ends on the smallest failing workload: report that one, with the seed's own figures.
  return out.failed && opts.shrink && last.report.violations.length > 0 ? last : first;
}

export async function simulate(opts: SimOptions): Promise<SimSummary> {
  const sum: SimSummary = { runs: 0, deliveries: 0, receipts: 0, duplicates: 0, kills: 0, steps: 0, failed: [] };
  const started = Date.now();
  const table = new SimTable(opts.dynamodbEndpoint, `sim-${process.pid}`);
  for (let i = 0; i < opts.runs && Date.now() < opts.deadline; i++) {
    const seed = opts.from + i;
    const { report, workload } = await runCase({ seed, pause: opts.pause ?? false }, table, {
      ...opts,
      verbose: opts.runs === 1 && opts.trace,
    });
    sum.runs++;
    sum.deliveries += report.deliveries;
    sum.receipts += report.receipts;
    sum.duplicates += report.duplicates;
    sum.kills += report.kills;
    sum.steps += report.steps;
    const failed = report.violations.length > 0;
    if (failed) sum.failed.push({ seed, report, workload });
    if (opts.trace || failed) {
      if (opts.trace) for (const line of report.trace) opts.print(line);
      opts.print(
        `seed ${seed}: ${failed ? 'VIOLATED' : 'ok'} (${report.steps} steps, ${report.deliveries} deliveries)`,
      );
      for (const v of report.violations) opts.print(`  ${v.rule}: ${v.detail}`);
      if (failed) opts.print(`  workload: ${JSON.stringify(workload)}\n  replay: npm run sim -- --seed ${seed}`);
    }
    if (!opts.trace && sum.runs % 50 === 0) opts.print(progress(sum, started));
  }
  opts.print(progress(sum, started));
  return sum;
}

function progress(s: SimSummary, started: number): string {
  const perThousand = s.deliveries > 0 ? ((1000 * s.duplicates) / s.deliveries).toFixed(2) : '0.00';
  return [
    `runs ${s.runs}`,
    `deliveries ${s.deliveries}`,
    `requests received ${s.receipts}`,
    `steps ${s.steps}`,
    `invocations killed ${s.kills}`,
    `duplicates ${s.duplicates} (${perThousand} per 1,000 deliveries)`,
    `violations ${s.failed.length}`,
    `${((Date.now() - started) / 1000).toFixed(0)} s`,
  ].join(' · ');
}
