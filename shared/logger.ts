import type { Context } from 'aws-lambda';
import { loggingFromEnv, traceRootFromEnv, type LoggingConfig, type LogLevel } from './config';

/**
 * Structured JSON logs: one line per entry, the line Powertools' Logger (2.35) wrote, so the
 * log queries, the dashboard and the local pretty printer read it as before
 * (test/unit/logger.test.ts logs the same calls through both and compares them). Powertools
 * cost every bundle 20 KB and every cold start its `new Console(process.stdout, …)`, which
 * creates both streams at module load; this writes to a stream only when a line is logged.
 *
 * Not carried over, being unused here: sampling (`sampling_rate` is always 0), persistent and
 * temporary keys, log buffering, child loggers, POWERTOOLS_DEV's indented output, the TZ
 * offset in `timestamp` (always UTC, which is what Lambda's TZ=:UTC gave), and per-invocation
 * context for Lambda's multi-concurrency environments.
 */

export type { LogLevel } from './config';
export type LogAttributes = Record<string, unknown>;
/** What may follow the message: attributes, an Error (logged as `error`), a string (as `extra`). */
type Extra = LogAttributes | Error | string | null | undefined;
/** Where a finished line goes; `level` is the entry's, which picks stdout or stderr by default. */
export type LogWriter = (line: string, level: LogLevel) => void;

const THRESHOLDS: Record<LogLevel, number> = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 };
/** Keys of every line that attributes may not replace (Powertools drops them with a warning). */
const RESERVED = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);
/** Never copied from attributes (as Powertools' merge skips them). */
const UNSAFE = new Set(['__proto__', 'constructor']);

/** Powertools went through a node:console Console: DEBUG and INFO to stdout, WARN and above to stderr. */
export const toStandardStreams: LogWriter = (line, level) => {
  (THRESHOLDS[level] >= THRESHOLDS.WARN ? process.stderr : process.stdout).write(`${line}\n`);
};

interface InvocationFields {
  cold_start: boolean;
  function_arn: string;
  function_memory_size: string | number;
  function_name: string;
  function_request_id: string;
  tenant_id: string | undefined;
}

export interface LoggerOptions extends LoggingConfig {
  write?: LogWriter;
  /** The current X-Ray trace id; read for each line. */
  traceRoot?: () => string | undefined;
}

export class Logger {
  readonly #service: string;
  readonly #lambdaLevel: LogLevel | undefined;
  readonly #traceRoot: () => string | undefined;
  readonly #warned = new Set<string>();
  #threshold: number;
  #coldStart: boolean;
  #invocation: InvocationFields | undefined;
  #write: LogWriter;

  constructor(options: LoggerOptions) {
    this.#service = options.serviceName;
    this.#lambdaLevel = options.lambdaLogLevel;
    this.#threshold = THRESHOLDS[options.lambdaLogLevel ?? options.logLevel];
    this.#coldStart = options.onDemand;
    this.#traceRoot = options.traceRoot ?? (() => traceRootFromEnv());
    this.#write = options.write ?? toStandardStreams;
  }

  debug(input: string | LogAttributes, ...extra: Extra[]): void {
    this.#log('DEBUG', input, extra);
  }
  info(input: string | LogAttributes, ...extra: Extra[]): void {
    this.#log('INFO', input, extra);
  }
  warn(input: string | LogAttributes, ...extra: Extra[]): void {
    this.#log('WARN', input, extra);
  }
  error(input: string | LogAttributes, ...extra: Extra[]): void {
    this.#log('ERROR', input, extra);
  }
  critical(input: string | LogAttributes, ...extra: Extra[]): void {
    this.#log('CRITICAL', input, extra);
  }

  /** Under Lambda's advanced logging controls their level stays (and asking for more detail is warned about once), as in Powertools. */
  setLogLevel(level: LogLevel): void {
    if (this.#lambdaLevel) {
      if (Object.hasOwn(THRESHOLDS, level) && THRESHOLDS[level] < THRESHOLDS[this.#lambdaLevel]) {
        this.#warnOnce(`Current log level (${level}) does not match AWS Lambda Advanced Logging Controls minimum log level (${this.#lambdaLevel}). This can lead to data loss, consider adjusting them.`);
      }
      return;
    }
    if (!Object.hasOwn(THRESHOLDS, level)) throw new Error(`Invalid log level: ${String(level)}`);
    this.#threshold = THRESHOLDS[level];
  }

  /** The invocation's function and request on every following line; the process's first invocation is its cold start. */
  addContext(context: Pick<Context, 'invokedFunctionArn' | 'memoryLimitInMB' | 'functionName' | 'awsRequestId'> & { tenantId?: string }): void {
    const coldStart = this.#coldStart;
    this.#coldStart = false;
    this.#invocation = {
      cold_start: coldStart,
      function_arn: context.invokedFunctionArn,
      function_memory_size: context.memoryLimitInMB,
      function_name: context.functionName,
      function_request_id: context.awsRequestId,
      tenant_id: context.tenantId,
    };
  }

  /** Sends lines elsewhere (the local pretty printer, a test); returns the writer it replaces. */
  setWriter(write: LogWriter): LogWriter {
    const previous = this.#write;
    this.#write = write;
    return previous;
  }

  #log(level: LogLevel, input: string | LogAttributes, extra: Extra[]): void {
    if (THRESHOLDS[level] < this.#threshold) return;
    const attributes: LogAttributes = {};
    let message: unknown = input;
    if (typeof input !== 'string') {
      const { message: text, ...rest } = input;
      message = text;
      this.#collect(attributes, rest);
    }
    for (const item of extra) {
      if (item === null || item === undefined) continue;
      if (isError(item)) attributes.error = item;
      else if (typeof item === 'string') attributes.extra = item;
      else this.#collect(attributes, item);
    }
    const invocation = this.#invocation;
    const line: LogAttributes = {
      level,
      message,
      timestamp: new Date().toISOString(),
      service: this.#service,
      cold_start: invocation?.cold_start,
      function_arn: invocation?.function_arn,
      function_memory_size: invocation?.function_memory_size,
      function_name: invocation?.function_name,
      function_request_id: invocation?.function_request_id,
      sampling_rate: 0,
      xray_trace_id: this.#traceRoot(),
      tenant_id: invocation?.tenant_id,
    };
    // An attribute may replace an invocation field, but not with undefined.
    for (const [key, value] of Object.entries(attributes)) if (value !== undefined || line[key] === undefined) line[key] = value;
    // Powertools leaves out top-level keys that are undefined, null or empty; nested ones stay.
    for (const [key, value] of Object.entries(line)) if (value === undefined || value === null || value === '') delete line[key];
    this.#write(JSON.stringify(line, jsonReplacer()), level);
  }

  #collect(into: LogAttributes, from: LogAttributes): void {
    for (const [key, value] of Object.entries(from)) {
      if (RESERVED.has(key)) this.warn(`The key "${key}" is a reserved key and will be dropped.`);
      else if (!UNSAFE.has(key)) into[key] = value;
    }
  }

  #warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.warn(message);
  }
}

/** Also an Error made in another realm (a vm context, jest's sandbox), which `instanceof` misses. */
function isError(value: unknown): value is Error {
  return value instanceof Error || Object.prototype.toString.call(value) === '[object Error]';
}

/**
 * Powertools' JSON replacer: an Error, wherever it is, as `{ name, location, message, stack,
 * cause, …its own fields }`; a bigint as a string; a reference back to an object that contains
 * it left out (`null` in an array). Unlike Powertools, an Error that refers to itself (or a
 * cycle of causes) ends there too instead of recursing without end.
 */
function jsonReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return undefined;
    if (!isError(value)) {
      ancestors.push(value);
      return value;
    }
    const formatted = formatError(value, new Set());
    // Both: the error for the cycle check, its formatted form as the holder of what follows.
    ancestors.push(value, formatted);
    return formatted;
  };
}

function formatError(error: Error, chain: Set<Error>): LogAttributes {
  chain.add(error);
  const { name, message, stack, cause } = error;
  const formatted: LogAttributes = {
    name,
    location: codeLocation(stack),
    message,
    stack,
    cause: isError(cause) ? (chain.has(cause) ? undefined : formatError(cause, chain)) : cause,
  };
  for (const key of Object.keys(error)) {
    if (key !== 'name' && key !== 'message' && key !== 'stack' && key !== 'cause') formatted[key] = (error as unknown as LogAttributes)[key];
  }
  return formatted;
}

/** `file:line` of the first stack frame that has one, as Powertools finds it. */
function codeLocation(stack: string | undefined): string {
  for (const frame of stack?.split('\n') ?? []) {
    const match = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/.exec(frame);
    if (match) return `${match[1]}:${Number(match[2])}`;
  }
  return '';
}

/** The one logger of a process; its level from POWERTOOLS_LOG_LEVEL (the local stack and tests lower it) or Lambda's. */
export const logger = new Logger(loggingFromEnv());
