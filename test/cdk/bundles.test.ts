import { bundleSizes } from '../../lib/build/bundles';
import { allFunctionEntries } from '../../lib/constructs/entries';

describe('Lambda bundles', () => {
  it('every function bundles with the stack\'s esbuild options, within the 400 KB budget, and loads in a fresh Node process', async () => {
    const sizes = await bundleSizes();
    expect(sizes.map((s) => s.name).sort()).toEqual(Object.keys(allFunctionEntries()).sort());
    for (const s of sizes) {
      // Not empty: the smallest, Portal (serves the portal's files; no SDK, only the logger), is about 30 KB.
      expect(s.bytes).toBeGreaterThan(5_000);
      expect(Number.isFinite(s.initMs)).toBe(true);
    }
    // The cold-start budget (issue 28): every bundle at most 400 KB minified.
    expect(sizes.filter((s) => s.bytes > 400 * 1024).map((s) => `${s.name}: ${(s.bytes / 1024).toFixed(1)} KB`)).toEqual([]);
  }, 180_000);
});
