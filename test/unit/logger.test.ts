import type { Context } from 'aws-lambda';
import { ConfigError, loggingFromEnv } from '../../shared/config';
import type * as LoggerModuleExports from '../../shared/logger';

/**
 * What we configure on Powertools' Logger (shared/logger.ts): the service and level of the
 * process's logger, the fields of a line as the log queries and docs/operations.md name them,
 * the invocation's context on each entry's lines, and the writer the local stack's pretty
 * printer and tests use. Each test loads the module afresh under its own environment, as a
 * Lambda container loads it once.
 */

type LoggerModule = typeof LoggerModuleExports;
type Line = Record<string, unknown> & { stream: 'stdout' | 'stderr' };

/** Every variable the logger reads; unset unless a test sets it. TZ as Lambda sets it. */
const ENV_KEYS = [
  'POWERTOOLS_SERVICE_NAME',
  'POWERTOOLS_LOG_LEVEL',
  'LOG_LEVEL',
  'AWS_LAMBDA_LOG_LEVEL',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  '_X_AMZN_TRACE_ID',
  'TZ',
  'POWERTOOLS_DEV',
  'POWERTOOLS_LOGGER_SAMPLE_RATE',
  'POWERTOOLS_LOGGER_LOG_EVENT',
  'AWS_LAMBDA_MAX_CONCURRENCY',
];

/** Loads shared/logger.ts afresh with `env`, runs `body` (still with `env`: some variables are read per line) and returns what reached stdout and stderr. */
async function withLoggerModule(
  env: Record<string, string>,
  body: (mod: LoggerModule) => Promise<void> | void,
): Promise<Line[]> {
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  Object.assign(process.env, { TZ: ':UTC' }, env);
  const lines: Line[] = [];
  const spy = (stream: 'stdout' | 'stderr') =>
    jest.spyOn(process[stream], 'write').mockImplementation((chunk: unknown) => {
      const text = String(chunk);
      expect(text.endsWith('\n') && !text.slice(0, -1).includes('\n')).toBe(true);
      lines.push({ stream, ...(JSON.parse(text) as Record<string, unknown>) });
      return true;
    });
  const spies = [spy('stdout'), spy('stderr')];
  try {
    let mod: LoggerModule | undefined;
    await jest.isolateModulesAsync(async () => {
      mod = await import('../../shared/logger');
    });
    await body(mod as LoggerModule);
  } finally {
    for (const s of spies) s.mockRestore();
    for (const k of ENV_KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
  return lines;
}

const context = (awsRequestId: string) =>
  ({
    functionName: 'getJob',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:getJob',
    memoryLimitInMB: '256',
    awsRequestId,
  }) as Context;

describe('the process logger (shared/logger.ts)', () => {
  it('is named by POWERTOOLS_SERVICE_NAME and writes from POWERTOOLS_LOG_LEVEL up, in any case: WARN and above on stderr, the rest on stdout', async () => {
    const lines = await withLoggerModule(
      { POWERTOOLS_SERVICE_NAME: 'calls-test', POWERTOOLS_LOG_LEVEL: 'info' },
      ({ logger }) => {
        expect(logger.getLevelName()).toBe('INFO');
        logger.debug('hidden');
        logger.info('shown');
        logger.error('failed');
      },
    );
    expect(lines.map((l) => [l.stream, l.level, l.message, l.service])).toEqual([
      ['stdout', 'INFO', 'shown', 'calls-test'],
      ['stderr', 'ERROR', 'failed', 'calls-test'],
    ]);
  });

  it('defaults to service shop-calls-api at INFO', async () => {
    const lines = await withLoggerModule({}, ({ logger }) => {
      expect(logger.getLevelName()).toBe('INFO');
      logger.info('shown');
    });
    expect(lines.map((l) => l.service)).toEqual(['shop-calls-api']);
  });

  it('does not load with a level it does not know, naming the variable', async () => {
    await expect(withLoggerModule({ POWERTOOLS_LOG_LEVEL: 'VERBOSE' }, () => undefined)).rejects.toThrow(
      /^POWERTOOLS_LOG_LEVEL must be one of/,
    );
  });

  it("keeps Lambda's own level (advanced logging controls) when it is set, over POWERTOOLS_LOG_LEVEL and setLogLevel", async () => {
    const lines = await withLoggerModule(
      { POWERTOOLS_LOG_LEVEL: 'DEBUG', AWS_LAMBDA_LOG_LEVEL: 'ERROR' },
      ({ logger }) => {
        logger.setLogLevel('DEBUG');
        logger.info('hidden');
        logger.error('shown');
      },
    );
    expect(
      lines.map((l) => l.message).filter((m) => m !== undefined && !String(m).startsWith('Current log level')),
    ).toEqual(['shown']);
  });

  it("puts an entry's invocation on its lines: the fields of every line, in order, then the entry's own; an Error as name, location, message, stack", async () => {
    const lines = await withLoggerModule(
      {
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
        _X_AMZN_TRACE_ID: 'Root=1-6745a1b2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1',
      },
      async ({ logger, withLambdaContext }) => {
        logger.info('before any invocation');
        const entry = withLambdaContext(async (event: { n: number }) =>
          logger.warn('in the invocation', { shop_id: 'shop_1', n: event.n, error: new Error('boom') }),
        );
        await entry({ n: 1 }, context('request-1'));
        await entry({ n: 2 }, context('request-2'));
      },
    );
    expect(Object.keys(lines[0] as Line)).toEqual([
      'stream',
      'level',
      'message',
      'timestamp',
      'service',
      'sampling_rate',
      'xray_trace_id',
    ]);
    const [first, second] = lines.slice(1);
    expect(Object.keys(first as Line)).toEqual([
      'stream',
      'level',
      'message',
      'timestamp',
      'service',
      'cold_start',
      'function_arn',
      'function_memory_size',
      'function_name',
      'function_request_id',
      'sampling_rate',
      'xray_trace_id',
      'shop_id',
      'n',
      'error',
    ]);
    expect(first).toMatchObject({
      level: 'WARN',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      cold_start: true,
      function_arn: 'arn:aws:lambda:eu-west-1:123456789012:function:getJob',
      function_memory_size: '256',
      function_name: 'getJob',
      function_request_id: 'request-1',
      sampling_rate: 0,
      xray_trace_id: '1-6745a1b2-0123456789abcdef01234567',
      n: 1,
      error: {
        name: 'Error',
        location: expect.stringMatching(/\.ts:\d+$/),
        message: 'boom',
        stack: expect.stringContaining('Error: boom'),
      },
    });
    expect(second).toMatchObject({ cold_start: false, function_request_id: 'request-2', n: 2 });
  });

  it('sends the line Powertools would have written to a writer until the writer is taken away', async () => {
    const written: string[] = [];
    const lines = await withLoggerModule({}, ({ logger }) => {
      logger.warn('to the stream', { a: 1n, nested: { b: null } });
      expect(logger.setWriter((line) => written.push(line))).toBeUndefined();
      logger.warn('to the stream', { a: 1n, nested: { b: null } });
      logger.debug('below the level: not even made');
      const mine = logger.setWriter(undefined);
      mine?.('handed back');
      logger.info('to the stream again');
    });
    expect(lines.map((l) => l.message)).toEqual(['to the stream', 'to the stream again']);
    expect(written).toHaveLength(2);
    expect(written[1]).toBe('handed back');
    const { stream, timestamp, ...streamed } = lines[0] as Line;
    const { timestamp: writtenAt, ...toWriter } = JSON.parse(written[0] as string) as Record<string, unknown>;
    expect([stream, typeof timestamp, typeof writtenAt]).toEqual(['stderr', 'string', 'string']);
    expect(toWriter).toEqual(streamed);
    expect(toWriter).toMatchObject({ a: '1', nested: { b: null } });
  });
});

describe('logging configuration (shared/config.ts)', () => {
  it('reads the service and the level, in any case, with their defaults', () => {
    expect(loggingFromEnv({})).toEqual({ serviceName: 'shop-calls-api', logLevel: 'INFO' });
    expect(loggingFromEnv({ POWERTOOLS_SERVICE_NAME: 'x', POWERTOOLS_LOG_LEVEL: 'debug' })).toEqual({
      serviceName: 'x',
      logLevel: 'DEBUG',
    });
    expect(loggingFromEnv({ POWERTOOLS_LOG_LEVEL: '' }).logLevel).toBe('INFO');
  });

  it('refuses a level it does not know, naming the variable', () => {
    expect(() => loggingFromEnv({ POWERTOOLS_LOG_LEVEL: 'VERBOSE' })).toThrow(
      new ConfigError(
        "POWERTOOLS_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT, got 'VERBOSE'",
      ),
    );
  });

  it('checks only its own variables: a bad one elsewhere is for the function config to refuse', () => {
    expect(loggingFromEnv({ TIME_SCALE: '2' }).logLevel).toBe('INFO');
  });
});
