/**
 * Cold-start reference of the portal, which uses no SDK client (so its SDK reference would be
 * an empty handler, Node's require of an empty file): the same page read and answered by a
 * bare handler, what serving it costs before any of our code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const handler = async () => ({
  statusCode: 200,
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: readFileSync(join(process.cwd(), 'portal', 'index.html'), 'utf8'),
});
