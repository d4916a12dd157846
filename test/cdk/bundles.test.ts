import { bundleSizes } from '../../lib/build/bundles';
import { allFunctionEntries } from '../../lib/constructs/entries';

describe('Lambda bundles', () => {
  it('every function bundles with the stack\'s esbuild options and loads in a fresh Node process', async () => {
    const sizes = await bundleSizes();
    expect(sizes.map((s) => s.name).sort()).toEqual(Object.keys(allFunctionEntries()).sort());
    for (const s of sizes) {
      expect(s.bytes).toBeGreaterThan(10_000);
      expect(Number.isFinite(s.initMs)).toBe(true);
    }
  }, 180_000);
});
