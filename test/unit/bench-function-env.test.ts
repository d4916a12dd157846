import { functionEnvironments } from '../../bench/lib/function-env';
import { allFunctionEntries } from '../../lib/constructs/entries';

describe("the cold-start benchmark's function environments", () => {
  it('resolves every deploy-time reference of every function the stack deploys, to the loopback stub', () => {
    const stub = { url: 'http://127.0.0.1:1', port: 1 };
    const envs = functionEnvironments(Object.keys(allFunctionEntries()), stub);
    expect(Object.keys(envs).sort()).toEqual(Object.keys(allFunctionEntries()).sort());
    // A queue URL the stack passes in points at the stub, never at AWS.
    const queueUrls = Object.values(envs).flatMap((env) =>
      Object.entries(env)
        .filter(([k]) => k.endsWith('_URL') && k.includes('Q'))
        .map(([, v]) => v),
    );
    expect(queueUrls.length).toBeGreaterThan(0);
    expect(queueUrls.every((url) => url.startsWith(stub.url))).toBe(true);
    expect(envs.Sweep?.DELIVERY_DLQ_URL).toMatch(/^http:\/\/127\.0\.0\.1:1\//);
  }, 60_000);
});
