/** Builds every Lambda as the CDK stack does, for the size report, its test and the benchmarks. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { allFunctionEntries, repoRoot } from '../constructs/entries';
import { BUNDLE_ALIASES, BUNDLING } from '../constructs/function';

export interface BundleSize {
  name: string;
  entry: string;
  bytes: number;
  initMs: number;
}

/** Median of 3 fresh-process `require` timings: what a cold start pays for module init. */
function initTime(file: string): number {
  const script = `const t=process.hrtime.bigint();require(${JSON.stringify(file)});process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`;
  const runs = [0, 1, 2].map(() => Number(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, AWS_REGION: 'us-east-1', TABLE_NAME: 'x' } }).toString()));
  return runs.sort((a, b) => a - b)[1] as number;
}

export async function bundleSizes(): Promise<BundleSize[]> {
  const root = repoRoot();
  const out = mkdtempSync(join(tmpdir(), 'bundles-'));
  try {
    const results: BundleSize[] = [];
    for (const [name, entry] of Object.entries(allFunctionEntries())) {
      const outfile = join(out, `${name}.cjs`);
      await build({
        entryPoints: [join(root, entry)],
        outfile,
        bundle: true,
        platform: 'node',
        target: BUNDLING.target,
        format: 'cjs',
        minify: BUNDLING.minify,
        sourcemap: false,
        mainFields: BUNDLING.mainFields,
        alias: BUNDLE_ALIASES,
        absWorkingDir: root,
        logLevel: 'error',
      });
      results.push({ name, entry, bytes: statSync(outfile).size, initMs: initTime(outfile) });
    }
    return results;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
