/**
 * `npm run bench`: every benchmark, one after another, each in its own process (each
 * starts and stops its own local stack), printing Markdown tables for docs/performance.md,
 * then how many of the targets each printed were met.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, totalmem } from 'node:os';
import { closingCost } from './lib/all-in-line';

const scripts = [
  'cold-start',
  'fanout-cost',
  'api',
  'delivery-latency',
  'delivery-throughput',
  'table-ops',
  'noisy-neighbour',
  'crash',
];

console.log(`# Benchmarks, ${new Date().toISOString()}`);
console.log(
  `Node ${process.versions.node} on ${process.platform}/${process.arch}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
);
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
  console.log(
    `\n(${name}: ${((Date.now() - started) / 1000).toFixed(0)} s${code === 0 ? '' : `, FAILED with ${code ?? signal}`})`,
  );
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
process.exitCode = failed > 0 ? 1 : 0;
