import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { routes } from '../../shared/routes';

const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');

describe("docs/api.md's table of operations", () => {
  it('lists every operation of the route table once, with the scope that allows it', () => {
    const table = doc.slice(doc.indexOf('## Operations'), doc.indexOf('## Conventions'));
    const rows = table.split('\n').filter((line) => /^\| (GET|POST|PATCH|DELETE) /.test(line));
    expect(rows).toHaveLength(routes.length);
    for (const route of routes) {
      const row = rows.find((r) => r.startsWith(`| ${route.method} `) && r.includes(` \`${route.path}\` `));
      // The narrowest scope that allows it (the first listed), or "any key".
      const scope = route.scopes.length === 0 ? 'any key' : `\`${route.scopes[0]}\``;
      expect([route.operationId, row?.includes(scope)]).toEqual([route.operationId, true]);
    }
  });
});
