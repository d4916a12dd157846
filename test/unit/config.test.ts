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
    expect(() => configFromContext(context({ rateLimitBurstFactor: '0.5' }))).toThrow(
      /rateLimitBurstFactor must be at least 1, got 0.5/,
    );
    expect(configFromContext(context({ rateLimitBurstFactor: '1' })).rateLimits.burstFactor).toBe(1);
    expect(configFromContext(context({})).rateLimits.burstFactor).toBe(2);
  });

  it('refuses a delivery timeout the consumer could not finish within its own 30 s', () => {
    expect(configFromContext(context({ deliveryTimeoutMs: '20000' })).deliveryTimeoutMs).toBe(20_000);
    expect(() => configFromContext(context({ deliveryTimeoutMs: '25000' }))).toThrow(
      /deliveryTimeoutMs must be at most 20000 .*got 25000/,
    );
  });

  it('refuses a log retention CloudWatch does not offer', () => {
    expect(configFromContext(context({})).logRetentionDays).toBe(30);
    expect(configFromContext(context({ logRetentionDays: '14' })).logRetentionDays).toBe(14);
    expect(() => configFromContext(context({ logRetentionDays: '10' }))).toThrow(
      /logRetentionDays must be a CloudWatch Logs retention value .*got 10/,
    );
  });

  it("gives recover API Gateway's 29 s unless told less, and refuses more", () => {
    expect(configFromContext(context({})).recoverTimeoutSeconds).toBe(29);
    expect(configFromContext(context({ recoverTimeoutSeconds: '15' })).recoverTimeoutSeconds).toBe(15);
    expect(() => configFromContext(context({ recoverTimeoutSeconds: '60' }))).toThrow(
      /recoverTimeoutSeconds must be at most 29 .*got 60/,
    );
  });

  it('reserves sweeper concurrency only when asked, as a whole number', () => {
    expect(configFromContext(context({})).sweeperReservedConcurrency).toBeUndefined();
    expect(configFromContext(context({ sweeperReservedConcurrency: '2' })).sweeperReservedConcurrency).toBe(2);
    expect(() => configFromContext(context({ sweeperReservedConcurrency: '1.5' }))).toThrow(
      /sweeperReservedConcurrency must be a whole number/,
    );
  });

  it('traces the delivery path only with fullTracing', () => {
    expect(configFromContext(context({})).fullTracing).toBe(false);
    expect(configFromContext(context({ fullTracing: 'true' })).fullTracing).toBe(true);
  });

  it("takes the voice platform's account only as a 12-digit id", () => {
    expect(configFromContext(context({})).ingestInvokerAccount).toBeUndefined();
    expect(configFromContext(context({ ingestInvokerAccount: '210987654321' })).ingestInvokerAccount).toBe(
      '210987654321',
    );
    expect(() => configFromContext(context({ ingestInvokerAccount: 'arn:aws:iam::210987654321:root' }))).toThrow(
      /ingestInvokerAccount must be a 12-digit AWS account id/,
    );
  });
});
