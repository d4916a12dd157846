import { configFromContext } from '../../lib/config';

const context = (values: Record<string, unknown>) => ({ tryGetContext: (key: string): unknown => values[key] });

describe('deployment settings from CDK context', () => {
  it('leaves runtime source maps off unless asked, from cdk.json (boolean) or -c (string)', () => {
    expect(configFromContext(context({})).sourceMaps).toBe(false);
    expect(configFromContext(context({ sourceMaps: 'true' })).sourceMaps).toBe(true);
    expect(configFromContext(context({ sourceMaps: true })).sourceMaps).toBe(true);
    expect(configFromContext(context({ sourceMaps: 'yes' })).sourceMaps).toBe(false);
  });

  it('refuses a log level the functions would refuse at init', () => {
    expect(configFromContext(context({})).logLevel).toBe('INFO');
    expect(configFromContext(context({ logLevel: 'debug' })).logLevel).toBe('debug');
    expect(() => configFromContext(context({ logLevel: 'VERBOSE' }))).toThrow(/logLevel must be one of .*got VERBOSE/);
  });

  it('refuses a non-positive number', () => {
    expect(() => configFromContext(context({ deliveryTimeoutMs: '0' }))).toThrow(/deliveryTimeoutMs/);
  });

  it('refuses a rate-limit burst under the rate, which the functions would refuse at every start', () => {
    expect(() => configFromContext(context({ rateLimitBurstFactor: '0.5' }))).toThrow(/rateLimitBurstFactor must be at least 1, got 0.5/);
    expect(configFromContext(context({ rateLimitBurstFactor: '1' })).rateLimits.burstFactor).toBe(1);
    expect(configFromContext(context({})).rateLimits.burstFactor).toBe(2);
  });
});
