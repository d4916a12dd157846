import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, buildBundleWithInputs, bundleSizes } from '../../lib/build/bundles';
import { allFunctionEntries, repoRoot } from '../../lib/constructs/entries';
import { copyHooks } from '../../lib/constructs/function';
import { routes } from '../../shared/routes';

describe('Lambda bundles', () => {
  // Sizes are reported (npm run bundle:report), not budgeted: the cold-start ratio is the target (docs/performance.md).
  it("every function bundles with the stack's esbuild options and loads in a fresh Node process", async () => {
    // One load each shows that it loads (the size report times three and takes the median).
    const sizes = await bundleSizes(1);
    expect(sizes.map((s) => s.name).sort()).toEqual(Object.keys(allFunctionEntries()).sort());
    for (const s of sizes) {
      // Not empty: the smallest, Portal (serves the portal's files; no SDK, only the logger), is about 30 KB.
      expect(s.bytes).toBeGreaterThan(5_000);
      expect(Number.isFinite(s.initMs)).toBe(true);
    }
  }, 180_000);

  it('the consumer bundles the AWS SDK clients with their recursion-detection middleware (the X-Ray trace header is sent)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
    try {
      const file = join(dir, 'deliver.cjs');
      await buildBundle(join(repoRoot(), allFunctionEntries().Deliver as string), file);
      const code = readFileSync(file, 'utf8');
      // The middleware reads Lambda's trace id from the environment and sends it as this header.
      expect(code).toContain('_X_AMZN_TRACE_ID');
      expect(code).toContain('X-Amzn-Trace-Id');
      // The SDK's own clients, each with its service's protocol code.
      for (const service of ['DynamoDB_20120810', 'AmazonSQS', 'TrentService']) expect(code).toContain(service);
      expect(code).toMatch(/scheduler/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the payload-filter matcher (sift) is in the functions that select endpoints, and not in the consumer, which selects none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
    try {
      const holdsSift = async (name: string) => {
        const { inputs } = await buildBundleWithInputs(
          join(repoRoot(), allFunctionEntries()[name] as string),
          join(dir, `${name}.cjs`),
        );
        return inputs.some((file) => file.startsWith('node_modules/sift/'));
      };
      expect(await holdsSift('Deliver')).toBe(false);
      for (const name of ['Fanout', 'RedeliverEvent', 'RecoverWebhookEndpoint'])
        expect(await holdsSift(name)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("copies the files a route's handler reads at run time into its asset, at the same path", () => {
    const files = routes.flatMap((r) => r.files);
    expect(files).toContain('docs/event-types.json');
    const dir = mkdtempSync(join(tmpdir(), 'asset-'));
    try {
      const hooks = copyHooks([...files, 'portal']);
      for (const command of hooks.afterBundling(repoRoot(), dir)) execSync(command);
      for (const file of files) expect(readFileSync(join(dir, file))).toEqual(readFileSync(join(repoRoot(), file)));
      expect(existsSync(join(dir, 'portal', 'index.html'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
