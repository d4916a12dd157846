/** Builds every Lambda as the CDK stack does, for the size report, its test and the benchmarks. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { allFunctionEntries, repoRoot } from '../constructs/entries';
import { BUNDLE_ALIASES, BUNDLING } from '../constructs/function';

export interface BundleSize {
  name: string;
  entry: string;
  bytes: number;
  initMs: number;
}

/** The environment ServiceFunction gives every function, minus what only AWS has. */
const FUNCTION_ENV = {
  POWERTOOLS_SERVICE_NAME: 'shop-calls-api',
  POWERTOOLS_LOG_LEVEL: 'INFO',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bundle-check',
  AWS_SECRET_ACCESS_KEY: 'bundle-check',
  TABLE_NAME: 'bundle-check',
};

/** The stack's esbuild options (lib/constructs/function.ts), source map beside the bundle as in the asset. */
const STACK_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: BUNDLING.target,
  format: 'cjs',
  minify: BUNDLING.minify,
  sourcemap: BUNDLING.sourceMap,
  mainFields: BUNDLING.mainFields,
  alias: BUNDLE_ALIASES,
  logLevel: 'error',
};

/**
 * One function bundled with the stack's esbuild options (source map beside it, as in the asset);
 * returns the .cjs size.
 */
export async function buildBundle(entry: string, outfile: string): Promise<number> {
  return (await buildBundleWithInputs(entry, outfile)).bytes;
}

/**
 * The same, with the files whose code the bundle holds (relative to the repository root, e.g.
 * `node_modules/@aws-sdk/client-kms/…`; files read but tree-shaken away are left out).
 */
export async function buildBundleWithInputs(
  entry: string,
  outfile: string,
): Promise<{ bytes: number; inputs: string[] }> {
  const result = await build({
    ...STACK_OPTIONS,
    entryPoints: [entry],
    outfile,
    absWorkingDir: repoRoot(),
    metafile: true,
  });
  const inputs = Object.values(result.metafile.outputs).flatMap((o) =>
    Object.entries(o.inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([file]) => file),
  );
  return { bytes: statSync(outfile).size, inputs };
}

/**
 * Median of `runs` fresh-process `require` timings: what a cold start pays for module
 * init. `sourceMaps` runs Node as `-c sourceMaps=true` deploys it (--enable-source-maps).
 */
export function initTime(file: string, runs = 3, sourceMaps = false): number {
  const script =
    `const t=process.hrtime.bigint();require(${JSON.stringify(file)});` +
    'process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))';
  const flags = sourceMaps ? ['--enable-source-maps'] : [];
  const times = Array.from({ length: runs }, () =>
    Number(
      execFileSync(process.execPath, [...flags, '-e', script], {
        env: { PATH: process.env.PATH, ...FUNCTION_ENV },
      }).toString(),
    ),
  );
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)] as number;
}

/**
 * Every function bundled and timed. One esbuild build with an entry point per function reads
 * each module once and still writes each function its own bundle (no code is split between them).
 */
export async function bundleSizes(runs = 3): Promise<BundleSize[]> {
  const root = repoRoot();
  const out = mkdtempSync(join(tmpdir(), 'bundles-'));
  try {
    const entries = Object.entries(allFunctionEntries());
    await build({
      ...STACK_OPTIONS,
      entryPoints: Object.fromEntries(entries.map(([name, entry]) => [name, join(root, entry)])),
      outdir: out,
      outExtension: { '.js': '.cjs' },
      absWorkingDir: root,
    });
    return entries.map(([name, entry]) => {
      const outfile = join(out, `${name}.cjs`);
      return { name, entry, bytes: statSync(outfile).size, initMs: initTime(outfile, runs) };
    });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
