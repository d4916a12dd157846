/**
 * `npm run bench`: every benchmark, one after another, each in its own process (each
 * starts and stops its own local stack), printing Markdown tables for docs/performance.md,
 * then how many of the targets each printed were met, and how long the whole run took.
 *
 * The whole run is meant to finish within BUDGET_MINUTES on the 2-core machine, so a quiet
 * slot for it can be planned: the rounds and sizes each benchmark defaults to are chosen
 * for that (docs/performance.md, Targets, gives the estimate per benchmark).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, totalmem } from 'node:os';
import { closingCost } from './lib/all-in-line';

const BUDGET_MINUTES = 30;
const all = [
  'cold-start',
  'fanout-cost',
  'api',
  'delivery-latency',
  'delivery-throughput',
  'table-ops',
  'noisy-neighbour',
  'crash',
];
/** BENCH_RUN_ONLY=api,fanout-cost: some of them, in the same order (a check of the runner, not a full run). */
const only = process.env.BENCH_RUN_ONLY?.split(',').map((s) => s.trim());
const unknown = (only ?? []).filter((name) => !all.includes(name));
if (unknown.length > 0) throw new Error(`BENCH_RUN_ONLY names no benchmark: ${unknown.join(', ')}`);
const scripts = only ? all.filter((name) => only.includes(name)) : all;

console.log(`# Benchmarks, ${new Date().toISOString()}`);
console.log(
  `Node ${process.versions.node} on ${process.platform}/${process.arch}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
);
const startedAll = Date.now();
const durations: string[] = [];
const verdicts: string[] = [];
let failed = 0;
let everything = '';
for (const name of scripts) {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  let printed = '';
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    printed += chunk.toString('utf8');
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  durations.push(`${name} ${seconds} s`);
  console.log(`\n(${name}: ${seconds} s${code === 0 ? '' : `, FAILED with ${code ?? signal}`})`);
  if (code !== 0) failed++;
  everything += printed;
  // Every target is a table cell reading `met` or `MISSED` (bench/lib/stats.ts `verdict`).
  const cells = [...printed.matchAll(/\|\s*(met|MISSED)\s*(?=\|)/g)].map((m) => m[1]);
  const missed = cells.filter((c) => c === 'MISSED').length;
  verdicts.push(`${name}: ${code === 0 ? `${cells.length - missed} met, ${missed} missed` : 'did not finish'}`);
}
// The all-in parts the benchmarks printed (bench/lib/cost.ts printAllIn), added up per regime: the last line.
const cost = closingCost(everything);
verdicts.push(cost.verdict);
console.log(`\n## Targets\n\n${verdicts.map((v) => `- ${v}`).join('\n')}`);
console.log(`\n${cost.line}`);
const elapsed = (Date.now() - startedAll) / 1000;
console.log(
  `\nTotal elapsed: ${Math.floor(elapsed / 60)} min ${Math.floor(elapsed % 60)} s ` +
    `(${elapsed <= BUDGET_MINUTES * 60 ? 'within' : 'OVER'} the ${BUDGET_MINUTES}-minute budget; ${durations.join(', ')})`,
);
process.exitCode = failed > 0 ? 1 : 0;
