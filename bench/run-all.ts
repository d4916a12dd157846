/**
 * `npm run bench`: every benchmark, one after another, each in its own process (each
 * starts and stops its own local stack), printing Markdown tables for docs/performance.md.
 */
import { spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';

const scripts = ['cold-start', 'fanout-cost', 'api', 'delivery-latency', 'delivery-throughput', 'table-ops', 'noisy-neighbour', 'crash'];

console.log(`# Benchmarks, ${new Date().toISOString()}`);
console.log(`Node ${process.versions.node} on ${process.platform}/${process.arch}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
let failed = 0;
for (const name of scripts) {
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], { stdio: 'inherit', env: process.env });
  console.log(`\n(${name}: ${((Date.now() - started) / 1000).toFixed(0)} s${run.status === 0 ? '' : `, FAILED with ${run.status ?? run.signal}`})`);
  if (run.status !== 0) failed++;
}
process.exitCode = failed > 0 ? 1 : 0;
