/**
 * Cold start: every Lambda bundled as the CDK bundles it (entries, esbuild options and
 * aliases from lib/constructs), its minified size, and its module init time in a fresh
 * Node process (median of BENCH_INIT_RUNS, default 15: a function's median moves ±10 % between runs of 7), beside two references built the
 * same way: a handler with no imports, and one with only the DynamoDB client. Targets
 * (issue 17; the size raised by issue 28): every bundle ≤ 400 KB, and every function's init ≤ 1.3× the DynamoDB-client
 * reference of the same run (a ratio, so a slow or busy machine moves both sides alike).
 *
 *   npm run bench:cold-start
 */
import './lib/quiet';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, initTime } from '../lib/build/bundles';
import { allFunctionEntries, repoRoot } from '../lib/constructs/entries';
import { printTable, setting, verdict } from './lib/stats';

const RUNS = setting('BENCH_INIT_RUNS', 15);
const SIZE_KB = 400;
const INIT_RATIO = 1.3;

const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));
try {
  const targets: { name: string; file: string; bytes: number; checked: boolean; sourceMaps?: boolean }[] = [];
  const add = async (name: string, entry: string, checked: boolean) => {
    const file = join(dir, `${targets.length}.cjs`);
    targets.push({ name, file, bytes: await buildBundle(join(repoRoot(), entry), file), checked });
  };
  await add('reference: empty handler', 'bench/reference/empty.ts', false);
  await add('reference: DynamoDB client only', 'bench/reference/dynamodb-client.ts', false);
  for (const [name, entry] of Object.entries(allFunctionEntries())) await add(name, entry, true);
  const getShop = targets.find((t) => t.name === 'GetShop');
  if (getShop) targets.push({ ...getShop, name: 'GetShop, deployed with -c sourceMaps=true', checked: false, sourceMaps: true });

  // Round robin, one fresh process per bundle per round, so drift on a shared machine weighs on all alike.
  const times = new Map<(typeof targets)[number], number[]>(targets.map((t) => [t, []]));
  for (let round = 0; round < RUNS; round++) for (const t of targets) times.get(t)?.push(initTime(t.file, 1, t.sourceMaps));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const rows = targets.map((t) => ({ ...t, initMs: median(times.get(t) ?? []) }));
  const reference = rows[1]?.initMs ?? Number.NaN;

  const kb = (b: number) => (b / 1024).toFixed(1);
  printTable(`Cold start: bundle size and module init (median of ${RUNS} fresh processes each, round robin, Node ${process.versions.node})`, ['function', 'KB', 'init ms', 'vs DynamoDB client', `size ≤ ${SIZE_KB} KB`, `init ≤ ${INIT_RATIO}× DynamoDB client`], rows.map((r) => [
    r.name,
    kb(r.bytes),
    r.initMs.toFixed(1),
    `${(r.initMs / reference).toFixed(2)}×`,
    r.checked ? verdict(r.bytes <= SIZE_KB * 1024) : '',
    r.checked ? verdict(r.initMs <= INIT_RATIO * reference) : '',
  ]));
  const checked = rows.filter((r) => r.checked);
  console.log(`\n${checked.filter((r) => r.bytes <= SIZE_KB * 1024).length} of ${checked.length} bundles within ${SIZE_KB} KB; ${checked.filter((r) => r.initMs <= INIT_RATIO * reference).length} with init within ${INIT_RATIO}× the DynamoDB client (${(INIT_RATIO * reference).toFixed(1)} ms in this run).`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
