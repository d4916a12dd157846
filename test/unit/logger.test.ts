import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { ConfigError, loggingFromEnv, traceRootFromEnv } from '../../shared/config';
import { Logger } from '../../shared/logger';

/**
 * shared/logger.ts must write the lines Powertools' Logger (2.35.0, a devDependency for this
 * test only) wrote: the same calls go through both, with the same environment, and every line
 * must match key for key, in the same order, on the same stream (timestamps aside: the two
 * clocks are read a moment apart).
 */

type Stream = 'stdout' | 'stderr';
type Written = [Stream, string][];
/** What both loggers have and the codebase uses. */
interface Both {
  debug(input: string | Record<string, unknown>, ...extra: unknown[]): void;
  info(input: string | Record<string, unknown>, ...extra: unknown[]): void;
  warn(input: string | Record<string, unknown>, ...extra: unknown[]): void;
  error(input: string | Record<string, unknown>, ...extra: unknown[]): void;
  critical(input: string | Record<string, unknown>, ...extra: unknown[]): void;
  setLogLevel(level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'CRITICAL' | 'SILENT'): void;
  addContext(context: { invokedFunctionArn: string; memoryLimitInMB: string; functionName: string; functionVersion: string; awsRequestId: string; tenantId?: string }): void;
}

/** Every variable either logger reads; unset unless a test sets it. TZ as Lambda sets it. */
const ENV_KEYS = ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_LOG_LEVEL', 'LOG_LEVEL', 'AWS_LAMBDA_LOG_LEVEL', 'AWS_LAMBDA_INITIALIZATION_TYPE', '_X_AMZN_TRACE_ID', 'TZ', 'POWERTOOLS_DEV', 'POWERTOOLS_LOGGER_SAMPLE_RATE', 'POWERTOOLS_LOGGER_LOG_EVENT', 'AWS_LAMBDA_MAX_CONCURRENCY'];

function withEnv<T>(env: Record<string, string>, run: () => T): T {
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  Object.assign(process.env, { TZ: ':UTC', POWERTOOLS_SERVICE_NAME: 'shop-calls-api' }, env);
  try {
    return run();
  } finally {
    for (const k of ENV_KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

const collector = (name: Stream, into: Written) =>
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      into.push([name, chunk.toString()]);
      done();
    },
  });

function throughPowertools(script: (logger: Both) => void): Written {
  const written: Written = [];
  const logger = new PowertoolsLogger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME });
  // Its own Console, as in Lambda, on streams we can read.
  (logger as unknown as { console: Console }).console = new Console({ stdout: collector('stdout', written), stderr: collector('stderr', written) });
  script(logger as unknown as Both);
  return written;
}

function throughOurs(script: (logger: Both) => void): Written {
  const written: Written = [];
  const spy = (name: Stream) => jest.spyOn(process[name], 'write').mockImplementation((chunk: unknown) => written.push([name, String(chunk)]) > 0);
  const spies = [spy('stdout'), spy('stderr')];
  try {
    script(new Logger(loggingFromEnv()) as unknown as Both);
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return written;
}

/** The lines of both, parsed and compared; returns ours for further checks. */
function compare(env: Record<string, string>, script: (logger: Both) => void): Record<string, unknown>[] {
  const theirs = withEnv(env, () => throughPowertools(script));
  const ours = withEnv(env, () => throughOurs(script));
  expect(theirs.length).toBeGreaterThan(0);
  expect(ours.map(([stream]) => stream)).toEqual(theirs.map(([stream]) => stream));
  const parse = ([, text]: [Stream, string]) => {
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    return JSON.parse(text) as Record<string, unknown>;
  };
  const theirLines = theirs.map(parse);
  const ourLines = ours.map(parse);
  for (const [i, ourLine] of ourLines.entries()) {
    const theirLine = theirLines[i] as Record<string, unknown>;
    expect(Object.keys(ourLine)).toEqual(Object.keys(theirLine));
    const { timestamp: ourTime, ...ourRest } = ourLine;
    const { timestamp: theirTime, ...theirRest } = theirLine;
    expect(ourRest).toEqual(theirRest);
    expect(ourTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(ourTime as string) - Date.parse(theirTime as string))).toBeLessThan(5_000);
  }
  expect(ourLines).toHaveLength(theirLines.length);
  return ourLines;
}

const context = { invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:GetJob', memoryLimitInMB: '256', functionName: 'GetJob', functionVersion: '$LATEST', awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678' };

describe('shared/logger.ts writes the lines Powertools Logger wrote', () => {
  it('levels: names, order, what INFO hides, stdout for DEBUG and INFO, stderr from WARN up', () => {
    const lines = compare({}, (l) => {
      l.debug('hidden at INFO');
      l.info('info');
      l.warn('warn');
      l.error('error');
      l.critical('critical');
      l.setLogLevel('DEBUG');
      l.debug('shown at DEBUG');
      l.setLogLevel('ERROR');
      l.warn('hidden at ERROR');
      l.error('shown at ERROR');
      l.setLogLevel('SILENT');
      l.critical('hidden when SILENT');
    });
    expect(lines.map((l) => l.message)).toEqual(['info', 'warn', 'error', 'critical', 'shown at DEBUG', 'shown at ERROR']);
    expect(lines[0]).toMatchObject({ level: 'INFO', service: 'shop-calls-api', sampling_rate: 0 });
  });

  it.each([['WARN'], ['DEBUG'], ['SILENT'], ['ERROR']])('POWERTOOLS_LOG_LEVEL=%s', (level) => {
    // Under SILENT nothing is written by either; the comparison needs a line, so the level is then raised.
    compare({ POWERTOOLS_LOG_LEVEL: level }, (l) => {
      for (const log of [l.debug, l.info, l.warn, l.error, l.critical]) log.call(l, `at ${level}`);
      if (level === 'SILENT') {
        l.setLogLevel('INFO');
        l.info('raised');
      }
    });
  });

  it.each([
    ['ERROR over a more verbose POWERTOOLS_LOG_LEVEL', { AWS_LAMBDA_LOG_LEVEL: 'ERROR', POWERTOOLS_LOG_LEVEL: 'DEBUG' }],
    ['INFO over a less verbose POWERTOOLS_LOG_LEVEL', { AWS_LAMBDA_LOG_LEVEL: 'INFO', POWERTOOLS_LOG_LEVEL: 'ERROR' }],
    ['FATAL, which is CRITICAL', { AWS_LAMBDA_LOG_LEVEL: 'FATAL' }],
    ['WARN, and setLogLevel asking for more (warned once) or less (ignored)', { AWS_LAMBDA_LOG_LEVEL: 'WARN' }],
  ])("Lambda's advanced logging controls win: %s", (_name, env) => {
    compare(env, (l) => {
      for (const log of [l.debug, l.info, l.warn, l.error, l.critical]) log.call(l, 'before');
      l.setLogLevel('DEBUG');
      l.setLogLevel('DEBUG');
      l.setLogLevel('CRITICAL');
      for (const log of [l.debug, l.info, l.warn, l.error, l.critical]) log.call(l, 'after');
    });
  });

  it('attributes: merged after the standard keys; top-level undefined, null and empty left out, nested kept; bigint, Date, arrays', () => {
    const lines = compare({}, (l) => {
      l.info('request', { method: 'GET', path: '/v1/jobs', status: 200, duration_ms: 12.5, request_id: 'req_1' });
      l.warn('Webhook delivery attempt failed', { delivery_id: 'dlv_1', error: 'timeout after 250 ms', status: null, empty: '', gone: undefined, zero: 0, no: false });
      l.info('nested', { outer: { a: null, b: '', c: undefined, d: [1, null, { e: 'f' }] }, when: new Date(1_790_000_000_000), big: 12345678901234567890n, bigs: [1n, { n: 2n }] });
      l.info('several objects, the later key wins', { a: 1, b: 1 }, { b: 2 }, null, undefined, { c: 3 });
      l.info('a string after the message', 'as extra');
      l.info({ message: 'an object first', shop_id: 'shop_1' });
      l.info({ shop_id: 'shop_1' });
      l.info('');
      l.info('replacing standard fields', { xray_trace_id: 'mine', function_name: 'mine', cold_start: undefined });
    });
    expect(lines[2]).toMatchObject({ big: '12345678901234567890', when: new Date(1_790_000_000_000).toISOString(), outer: { a: null, b: '', d: [1, null, { e: 'f' }] } });
  });

  it('reserved keys in attributes are dropped, each with a warning first', () => {
    const lines = compare({}, (l) => {
      l.warn('Ingest refused', { code: 'invalid_request', message: 'the real reason' });
      l.info('more', { level: 'x', service: 'y', timestamp: 'z', sampling_rate: 1, kept: true });
      l.info({ message: 'object input', level: 'x' });
    });
    expect(lines[0]).toMatchObject({ level: 'WARN', message: 'The key "message" is a reserved key and will be dropped.' });
    expect(lines[1]).toMatchObject({ message: 'Ingest refused', code: 'invalid_request' });
  });

  it('circular and shared references: a value that contains itself is cut where it recurs, a shared one is kept', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    loop.list = [loop, 1];
    const shared = { id: 1 };
    class Node {
      next: Node | undefined;
      constructor(readonly label: string) {}
    }
    const a = new Node('a');
    a.next = new Node('b');
    a.next.next = a;
    compare({}, (l) => {
      l.info('loops', { loop, both: [shared, shared], again: shared, node: a });
    });
  });

  it('errors, at the top, nested, positional, with causes and fields of their own', () => {
    class StoreError extends Error {
      override readonly name = 'StoreError';
      readonly code = 'ConditionalCheckFailed';
      readonly $metadata = { httpStatusCode: 400, attempts: 1 };
    }
    const cause = new TypeError('inner');
    const withCause = new Error('outer', { cause });
    const stringCause = new Error('outer', { cause: 'a string' });
    const custom = new StoreError('conditional check failed');
    const noStack = new RangeError('no stack');
    noStack.stack = undefined;
    compare({}, (l) => {
      l.error('Unhandled error', { request_id: 'req_1', error: custom });
      l.error('Delivery attempt failed', { error: withCause });
      l.error('cause not an Error', { error: stringCause });
      l.error('positional', noStack);
      l.warn('nested', { details: { inner: cause, list: [cause, 'x'] } });
      l.error('both', { error: custom }, withCause);
    });
    const [line] = compare({}, (l) => l.error('Unhandled error', { error: withCause }));
    expect(line?.error).toMatchObject({ name: 'Error', message: 'outer', location: expect.stringMatching(/logger\.test\.ts:\d+$/), cause: { name: 'TypeError', message: 'inner' } });
  });

  it('the Lambda context: cold start on the first invocation of an on-demand environment only', () => {
    const invoke = (l: Both) => {
      l.info('before any invocation');
      l.addContext(context);
      l.info('first');
      l.addContext({ ...context, awsRequestId: 'second-request', tenantId: 'tenant-1' });
      l.info('second');
      l.info('an attribute replaces a context field, but not with undefined', { function_request_id: 'mine', function_name: undefined });
    };
    const onDemand = compare({ AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand' }, invoke);
    expect(onDemand.map((l) => l.cold_start)).toEqual([undefined, true, false, false]);
    expect(onDemand[1]).toMatchObject({ function_arn: context.invokedFunctionArn, function_memory_size: '256', function_name: 'GetJob', function_request_id: context.awsRequestId });
    expect(onDemand[2]).toMatchObject({ function_request_id: 'second-request', tenant_id: 'tenant-1' });
    expect(onDemand[3]).toMatchObject({ function_request_id: 'mine', function_name: 'GetJob' });
    const provisioned = compare({ AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' }, invoke);
    expect(provisioned.map((l) => l.cold_start)).toEqual([undefined, false, false, false]);
    expect(compare({}, invoke).map((l) => l.cold_start)).toEqual([undefined, false, false, false]);
  });

  it.each([
    ['Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1', '1-5759e988-bd862e3fe1be46a994272793'],
    ['Parent=53995c3f42cd8ad8;Root=1-abc;Sampled=0;Lineage=a:1', '1-abc'],
    ['1-just-a-root', '1-just-a-root'],
  ])('the X-Ray trace id from _X_AMZN_TRACE_ID=%s', (header, root) => {
    const [line] = compare({ _X_AMZN_TRACE_ID: header }, (l) => l.info('traced'));
    expect(line?.xray_trace_id).toBe(root);
  });

  it('takes the service name from POWERTOOLS_SERVICE_NAME', () => {
    const [line] = compare({ POWERTOOLS_SERVICE_NAME: 'other-service' }, (l) => l.info('named'));
    expect(line?.service).toBe('other-service');
  });
});

describe('shared/logger.ts beyond the comparison', () => {
  const options = { serviceName: 's', logLevel: 'INFO', lambdaLogLevel: undefined, onDemand: true } as const;

  it('touches neither stdout nor stderr until a line is written (no stream is made at cold start)', async () => {
    const stdout = jest.spyOn(process, 'stdout', 'get');
    const stderr = jest.spyOn(process, 'stderr', 'get');
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      stdout.mockClear();
      await jest.isolateModulesAsync(async () => {
        await import('../../shared/logger');
      });
      const logger = new Logger(options);
      expect(stdout).not.toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
      logger.debug('not written at INFO');
      expect(stdout).not.toHaveBeenCalled();
      logger.info('written');
      expect(stdout).toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
      expect(write).toHaveBeenCalledTimes(1);
    } finally {
      write.mockRestore();
      stdout.mockRestore();
      stderr.mockRestore();
    }
  });

  it('sends lines to a writer set later, and hands back the one it replaces', () => {
    const first: string[] = [];
    const second: [string, string][] = [];
    const logger = new Logger({ ...options, write: (line) => first.push(line) });
    logger.info('one');
    const previous = logger.setWriter((line, level) => second.push([level, line]));
    logger.warn('two');
    previous('back', 'INFO');
    expect(first.map((l) => (l === 'back' ? l : (JSON.parse(l) as { message: string }).message))).toEqual(['one', 'back']);
    expect(second.map(([level, line]) => [level, (JSON.parse(line) as { message: string }).message])).toEqual([['WARN', 'two']]);
  });

  it('refuses an unknown level from code', () => {
    const logger = new Logger({ ...options, write: () => undefined });
    expect(() => logger.setLogLevel('LOUD' as 'INFO')).toThrow('Invalid log level: LOUD');
  });

  it('ends an Error that refers to itself, or a cycle of causes, where Powertools would recurse without end', () => {
    const lines: string[] = [];
    const logger = new Logger({ ...options, write: (line) => lines.push(line) });
    const a = new Error('a') as Error & { self?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    a.self = a;
    logger.error('cycles', { error: a });
    const error = (JSON.parse(lines[0] as string) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ name: 'Error', message: 'a', cause: { message: 'b' } });
    expect(error.self).toBeUndefined();
    expect((error.cause as Record<string, unknown>).cause).toBeUndefined();
  });
});

describe('logging configuration (shared/config.ts)', () => {
  it('reads the service, the level in any case, Lambda level (FATAL as CRITICAL) and the initialization type', () => {
    expect(loggingFromEnv({})).toEqual({ serviceName: 'shop-calls-api', logLevel: 'INFO', lambdaLogLevel: undefined, onDemand: false });
    expect(loggingFromEnv({ POWERTOOLS_SERVICE_NAME: 'x', POWERTOOLS_LOG_LEVEL: 'debug', AWS_LAMBDA_LOG_LEVEL: 'FATAL', AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand' })).toEqual({
      serviceName: 'x',
      logLevel: 'DEBUG',
      lambdaLogLevel: 'CRITICAL',
      onDemand: true,
    });
    expect(loggingFromEnv({ POWERTOOLS_LOG_LEVEL: '' }).logLevel).toBe('INFO');
  });

  it('refuses a level it does not know, naming the variable', () => {
    expect(() => loggingFromEnv({ POWERTOOLS_LOG_LEVEL: 'VERBOSE' })).toThrow(new ConfigError("POWERTOOLS_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT, got 'VERBOSE'"));
    expect(() => loggingFromEnv({ AWS_LAMBDA_LOG_LEVEL: 'SILENT' })).toThrow(/^AWS_LAMBDA_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, got 'SILENT'$/);
  });

  it('checks only its own variables: a bad one elsewhere is for the function config to refuse', () => {
    expect(loggingFromEnv({ TIME_SCALE: '2' }).logLevel).toBe('INFO');
  });

  it('reads the trace root of the invocation under way', () => {
    expect(traceRootFromEnv({})).toBeUndefined();
    expect(traceRootFromEnv({ _X_AMZN_TRACE_ID: 'Root=1-a;Parent=b' })).toBe('1-a');
    expect(traceRootFromEnv({ _X_AMZN_TRACE_ID: 'Parent=b;Sampled=1' })).toBeUndefined();
  });
});
