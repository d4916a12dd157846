import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { bannerLines } from '../../lib/local/banner';
import type { DemoSeed } from '../../lib/local/seed';

const readme = readFileSync('README.md', 'utf8');
const docs = [
  'README.md',
  'shared/delivery/README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
const anchorsOf = (file: string) =>
  new Set([...readFileSync(file, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] as string)));

describe('the README a newcomer reads', () => {
  it('has the quick start whole within its first 80 lines: install and start, test, the first request, webhook and portal', () => {
    const lines = readme.split('\n');
    const start = lines.findIndex((l) => l === '## Quick start');
    const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
    expect(start).toBeGreaterThan(0);
    expect(end).toBeLessThanOrEqual(80);
    const quickStart = lines.slice(start, end).join('\n');
    for (const text of [
      'npm ci && npm start',
      'npm test',
      'export KEY=sk_test_',
      'npm run listen',
      'npm run cli -- trigger call.completed',
      'npm run cli -- portal open --shop',
      'paste a key',
    ])
      expect(quickStart).toContain(text);
  });

  it('shows the lines npm start really prints', () => {
    const seeded = {
      shop: { id: 'shop_1', name: 'Demo Plumbing Co' },
      writeKey: { id: 'k', key: 'sk_test_…' },
      readKey: { id: 'r', key: 'sk_test_…' },
    } as DemoSeed;
    const banner = bannerLines({
      url: 'http://127.0.0.1:3000',
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      tableName: 'shop-calls',
      seeded,
      stackFile: resolve('.local', 'stack.json'),
      settings: '',
    });
    for (const line of [
      'Try it:',
      '  export KEY=sk_test_…',
      '  curl -H "Authorization: Bearer $KEY" http://127.0.0.1:3000/v1/calls',
      'API listening on http://127.0.0.1:3000',
    ])
      expect(banner).toContain(line);
    for (const line of banner.filter((l) => /^(Try it| {2}export| {2}curl|First webhook|API listening)/.test(l)))
      expect(readme).toContain(line);
  });

  it("uses no words only this project's developers know", () => {
    expect(readme).not.toMatch(/\.ci\/run|the spec\b|second stage|third stage|issue \d+|\bcontract's\b/i);
  });

  it('names one Node version: 24, with 22 or later working, as package.json, .nvmrc and docs/deploy.md do', () => {
    expect(readme).toContain('Node.js 24 (22 or later works)');
    expect((JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node).toBe(
      '>=22',
    );
    expect(readFileSync('.nvmrc', 'utf8').trim()).toBe('24');
    expect(readFileSync('docs/deploy.md', 'utf8')).toContain(
      'Node.js 24, the version the functions run on (22 or later works',
    );
  });

  it.each(docs)('%s links only to files and headings that exist', (file) => {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target as string)) continue; // http(s): links are for people, not checked here
      const [path, hash] = (target as string).split('#') as [string, string | undefined];
      const resolved = path === '' ? file : path.startsWith('/') ? `.${path}` : join(dirname(file), path);
      if (!existsSync(resolved)) broken.push(target as string);
      else if (hash && resolved.endsWith('.md') && !anchorsOf(resolved).has(hash)) broken.push(target as string);
    }
    expect(broken).toEqual([]);
  });
});
