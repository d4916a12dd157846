import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestStack } from '../helpers/stack';

const run = promisify(execFile);

/** examples/client.ts (the client library) run as a user would, against a local stack with demo data. */
describe('the typed client example', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack({ demoData: true, allowInsecureWebhookTargets: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('lists every call, job and event through the paginator and verifies a signed test webhook', async () => {
    const { stdout } = await run('node_modules/.bin/tsx', ['examples/client.ts'], {
      env: { ...process.env, BASE_URL: stack.url, API_KEY: stack.demo.writeKey.key },
      timeout: 60_000,
    });
    const data = stack.demo.data;
    expect(data).toBeDefined();
    expect(stdout).toContain(`shop: ${stack.demo.shop.id} Demo Plumbing Co`);
    expect(stdout).toContain(`calls: ${data?.calls}`);
    expect(stdout).toContain(
      `jobs: approved ${data?.jobs.approved}, declined ${data?.jobs.declined}, pending ${data?.jobs.pending}`,
    );
    expect(stdout).toContain(`events: ${data?.events}`);
    expect(stdout).toMatch(/latest event: (call\.completed|job\.created) /);
    expect(stdout).toMatch(/verified webhook: evt_\w+ webhook_endpoint\.test for we_\w+/);
    // It deletes the endpoint it made.
    expect(await stack.deps.endpoints.list(stack.demo.shop.id)).toEqual([]);
  }, 90_000);

  it('exits 2 with its usage when BASE_URL or API_KEY is missing', async () => {
    const failed = await run('node_modules/.bin/tsx', ['examples/client.ts'], {
      env: { ...process.env, BASE_URL: '', API_KEY: '' },
    }).catch((err: { code: number; stderr: string }) => err);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: BASE_URL=') });
  }, 30_000);
});
