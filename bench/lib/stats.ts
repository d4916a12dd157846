/** Small numeric helpers shared by the benchmarks: percentiles and a printed table. */

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of already sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean,
  };
}

/** The middle sample; for an even count, the mean of the two middle ones. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * A figure measured once per round: the median a verdict is taken on, and how far the rounds
 * moved (min–max, and the quartiles for figures with many rounds), printed beside it so a
 * verdict near its line shows as such.
 */
export interface Spread {
  rounds: number;
  median: number;
  min: number;
  max: number;
  q1: number;
  q3: number;
}

export function spreadOf(perRound: readonly number[]): Spread {
  const sorted = [...perRound].sort((a, b) => a - b);
  return {
    rounds: sorted.length,
    median: median(sorted),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    q1: percentile(sorted, 25),
    q3: percentile(sorted, 75),
  };
}

/** "1.21× (1.15–1.27×, 5 rounds)": the median, then min–max, or the quartiles (`iqr`) where one round can be an outlier. */
export function withSpread(
  s: Spread,
  format: (x: number) => string,
  unit = '',
  how: 'range' | 'iqr' = 'range',
): string {
  const [low, high] = how === 'iqr' ? [s.q1, s.q3] : [s.min, s.max];
  const label = how === 'iqr' ? 'IQR ' : '';
  return `${format(s.median)}${unit} (${label}${format(low)}–${format(high)}${unit}, ${s.rounds} rounds)`;
}

export const ms = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');
export const ratio = (x: number, floor: number): string =>
  floor > 0 && Number.isFinite(x) ? `${(x / floor).toFixed(2)}×` : '-';
export const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');

/** Prints a Markdown table: readable in a terminal and pasted as is into docs/performance.md. */
export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`;
  console.log(`\n### ${title}\n`);
  console.log(line(header));
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`);
  for (const r of cells.slice(1)) console.log(line(r));
}

/** Runs `task` `count` times one after another and returns each duration in ms. */
export async function timeEach(count: number, task: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await task(i);
    out.push(performance.now() - t);
  }
  return out;
}

export const sleep = (msDelay: number) => new Promise((r) => setTimeout(r, msDelay));

/** Reads a positive integer setting from the environment (so a quick run can use fewer samples). */
export function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** The most receipts in any closed one-second window, sliding over every receipt (performance.now() times). */
export function mostInOneSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) > 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
