import { batchHandler } from '../../shared/batch';
import { ConfigError, configFromEnv } from '../../shared/config';
import { dynamoOf } from '../../shared/wiring/clients';

describe('runtime configuration (shared/config.ts)', () => {
  it('refuses a malformed variable when the config is made, naming it', () => {
    expect(() => configFromEnv({ TIME_SCALE: '2' })).toThrow(
      new ConfigError("TIME_SCALE must be a number in (0, 1], got '2'"),
    );
    expect(() => configFromEnv({ DELIVERY_TIMEOUT_MS: '1.5' })).toThrow(/DELIVERY_TIMEOUT_MS/);
    expect(() => configFromEnv({ WEBHOOK_ALLOW_INSECURE_LOCAL: 'yes' })).toThrow(/WEBHOOK_ALLOW_INSECURE_LOCAL/);
  });

  it('names a secret that is malformed without echoing it', () => {
    expect(() => configFromEnv({ CURSOR_SECRET: 'too-short-to-sign' })).toThrow(
      new ConfigError('CURSOR_SECRET must be at least 32 characters'),
    );
  });

  it('requires a variable only when its section is read, so each function needs only its own', () => {
    const sweeper = configFromEnv({ TABLE_NAME: 't', QUEUE_URL: 'https://sqs/q' });
    expect(sweeper.queueUrl).toBe('https://sqs/q');
    expect(sweeper.webhooks).toEqual({ allowInsecureLocal: false, timeScale: 1, timeoutMs: 10_000, deferMs: 1_000 });
    expect(() => sweeper.scheduler).toThrow(/SCHEDULER_GROUP is not set/);
    expect(() => configFromEnv({}).table).toThrow(/TABLE_NAME is not set/);
  });

  it('treats an empty variable as unset', () => {
    expect(configFromEnv({ TABLE_NAME: 't', DYNAMODB_ENDPOINT: '', TIME_SCALE: '' }).table).toEqual({
      tableName: 't',
      endpoint: undefined,
      region: 'us-east-1',
    });
  });

  it('builds each client once per config, and never shares one between two configs', () => {
    const a = configFromEnv({ TABLE_NAME: 'a' });
    const b = configFromEnv({ TABLE_NAME: 'b' });
    expect(dynamoOf(a)).toBe(dynamoOf(a));
    expect(dynamoOf(a).doc).not.toBe(dynamoOf(b).doc);
    expect(dynamoOf(b).tableName).toBe('b');
  });
});

describe('batchHandler (shared/batch.ts)', () => {
  const handler = batchHandler({
    name: 'Test',
    id: (r: { id: string; body: string }) => r.id,
    read: (r) => (r.body === 'skip' ? null : (JSON.parse(r.body) as number)),
    process: (items) => Promise.allSettled(items.map(async (n) => (n < 0 ? Promise.reject(new Error('negative')) : n))),
  });

  it('reports, in record order, the records that could not be read or whose item failed', async () => {
    const event = {
      Records: [
        { id: 'a', body: '1' },
        { id: 'b', body: '-1' },
        { id: 'c', body: 'skip' },
        { id: 'd', body: '{' },
        { id: 'e', body: '2' },
      ],
    };
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'b' }, { itemIdentifier: 'd' }] });
  });

  it('returns every item it was given when the batch as a whole fails', async () => {
    const failing = batchHandler({
      name: 'Test',
      id: (r: { id: string }) => r.id,
      read: (r) => r,
      process: () => Promise.reject(new Error('table down')),
    });
    expect(await failing({ Records: [{ id: 'a' }, { id: 'b' }] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }],
    });
  });
});
