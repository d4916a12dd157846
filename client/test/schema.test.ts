/**
 * client/src/schema.ts is generated from docs/openapi.json (`npm run client:types`). Regenerating
 * it here in memory, the way the script does (openapi-typescript's openapiTS and astToString, then
 * prettier), keeps it from drifting. A child Node runs the generator: openapi-typescript loads ES
 * modules that jest's CommonJS sandbox cannot require.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const SCHEMA = 'client/src/schema.ts';

const generate = `
import { readFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';
const document = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
const generated = COMMENT_HEADER + astToString(await openapiTS(document, { silent: true }));
process.stdout.write(await format(generated, { ...(await resolveConfig('${SCHEMA}')), filepath: '${SCHEMA}' }));
`;

it('is what docs/openapi.json generates (run `npm run client:types` after changing the document)', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', generate], {
    maxBuffer: 16 * 1024 * 1024,
  });
  expect(stdout.length).toBeGreaterThan(10_000);
  expect(readFileSync(SCHEMA, 'utf8')).toBe(stdout);
});
