import { join, resolve } from 'node:path';
import { bannerLines, type BannerInput } from '../../lib/local/banner';
import type { DemoSeed } from '../../lib/local/seed';

const seeded = {
  shop: { id: 'shop_1', name: 'Demo Plumbing Co' },
  writeKey: { id: 'key_w', key: 'sk_test_write' },
  readKey: { id: 'key_r', key: 'sk_test_read' },
} as DemoSeed;
const base: BannerInput = {
  url: 'http://127.0.0.1:3300',
  dynamodbEndpoint: 'http://127.0.0.1:8300',
  tableName: 'shop-calls',
  stackFile: resolve('.local', 'stack.json'),
  settings: 'settings',
};

describe('the npm start banner', () => {
  it("exports the real write key and curls this start's port; the webhook commands need nothing more with the default stack file", () => {
    const lines = bannerLines({ ...base, seeded });
    expect(lines).toContain('  export KEY=sk_test_write');
    expect(lines).toContain('  curl -H "Authorization: Bearer $KEY" http://127.0.0.1:3300/v1/calls');
    expect(lines).toContain(
      'First webhook: `npm run listen` in another terminal, then `npm run cli -- trigger call.completed`.',
    );
    expect(lines).toContain('Portal:        http://127.0.0.1:3300/portal (paste a key with webhooks:write)');
    expect(lines.at(-1)).toBe('API listening on http://127.0.0.1:3300');
    expect(lines.join('\n')).not.toMatch(/<key>/);
  });

  it('names another stack file to the tools, and says how to get a key on a restart', () => {
    const lines = bannerLines({
      ...base,
      stackFile: join('/tmp', 'x', 'stack.json'),
      found: { id: 'shop_1', name: 'Demo Plumbing Co' },
    });
    expect(lines).toContain(
      'First webhook: `LOCAL_STACK_FILE=/tmp/x/stack.json npm run listen` in another terminal, then `LOCAL_STACK_FILE=/tmp/x/stack.json npm run cli -- trigger call.completed`.',
    );
    expect(lines).toContain('Get a key:     npm run cli -- key create --shop shop_1 --scopes all --write');
    expect(lines).toContain('  export KEY=sk_test_…   # the key that command prints');
    expect(lines.join('\n')).not.toContain('Write key:');
  });
});
