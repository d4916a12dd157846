import { runCase, type SimCase } from '../../sim/simulate';
import { SimTable } from '../../sim/table-stream';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../lib/local/dynamodb-local';

export interface CaseResult {
  seed: number;
  violations: string[];
  deliveries: number;
}

/**
 * A DynamoDB Local of the file's own, started on first use and stopped after its tests. A table
 * created on an emulator that has held many stream records is slow, and the rest of the suite (or
 * another sim file) writes thousands: on a shared one, the same seeds take several times as long.
 */
let own: Promise<DynamoDbLocal> | undefined;
const dynamodb = () => (own ??= startDynamoDbLocal({ port: 0 }));
afterAll(async () => {
  await (await own)?.stop();
});

/**
 * Runs the cases on one table of the file's DynamoDB Local, in order; with `untilViolation`,
 * stops at the first case that breaks a rule (a breakage test needs one).
 */
export async function runCases(cases: SimCase[], opts: { untilViolation?: boolean } = {}): Promise<CaseResult[]> {
  const table = new SimTable((await dynamodb()).endpoint, `sim-jest-${Math.random().toString(36).slice(2, 8)}`);
  const out: CaseResult[] = [];
  try {
    for (const c of cases) {
      const { report } = await runCase(c, table, { shrink: false, trace: false });
      out.push({
        seed: c.seed,
        violations: report.violations.map((v) => `${v.rule}: ${v.detail}`),
        deliveries: report.deliveries,
      });
      if (opts.untilViolation && report.violations.length > 0) break;
    }
  } finally {
    await table.renew();
  }
  return out;
}

export const seeds = (from: number, count: number, opts: { pause?: boolean } = {}): SimCase[] =>
  Array.from({ length: count }, (_, i) => ({ seed: from + i, ...opts }));

/** The cases that broke a rule, as `seed N: rule: detail` lines (empty when every rule held). */
export const broken = (results: CaseResult[]): string[] =>
  results.flatMap((r) => r.violations.map((v) => `seed ${r.seed}: ${v}`));
