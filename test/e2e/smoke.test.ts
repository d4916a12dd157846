import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startTestStack } from '../helpers/stack';

/** `npm run smoke -- --local …` (tsx bin/smoke.ts, as npm runs it) against this process's local stack. */
function smoke(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join('node_modules', '.bin', 'tsx'), ['bin/smoke.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('the post-deploy smoke script against the local stack', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.stop());

  it('creates a shop and key, calls /v1/me, registers an endpoint on its own receiver, ingests a call and verifies the signed delivery', async () => {
    const { code, out } = await smoke(['--local', '--api-url', stack.url, '--timeout-seconds', '45'], { DYNAMODB_ENDPOINT: stack.dynamodbEndpoint, TABLE_NAME: stack.tableName });
    expect(out).toMatch(/✓ GET \/v1\/me/);
    expect(out).toMatch(/✓ signature verified with the endpoint secret/);
    expect(out).toMatch(/PASS: shop shop_[0-9a-z]{26}, event evt_[0-9a-z]{26}, signature verified/);
    expect(code).toBe(0);
  }, 90_000);

  it('says what is missing when the stack outputs file is absent (exit 2)', async () => {
    const { code, out } = await smoke(['--stack', 'Nope', '--outputs', join('no-such-dir', 'outputs.json')], {});
    expect(out).toMatch(/outputs\.json not found: deploy with `npx cdk deploy --outputs-file/);
    expect(code).toBe(2);
  }, 60_000);
});
