/**
 * `npm run bundle:report`: builds every Lambda as the CDK stack does (same entries, same
 * esbuild options) and prints each minified size and its module init time in a fresh Node.
 */
import { bundleSizes } from '../lib/build/bundles';

const sizes = await bundleSizes();
const pad = Math.max(...sizes.map((s) => s.name.length));
console.log(`${'function'.padEnd(pad)}  minified KB  init ms`);
for (const s of sizes)
  console.log(`${s.name.padEnd(pad)}  ${(s.bytes / 1024).toFixed(1).padStart(11)}  ${s.initMs.toFixed(1).padStart(7)}`);
const largest = sizes.reduce((a, b) => (a.bytes > b.bytes ? a : b));
console.log(`\n${sizes.length} functions; largest ${largest.name} at ${(largest.bytes / 1024).toFixed(1)} KB`);
