import { Logger as PowertoolsLogger, type LogItem } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { loggingFromEnv } from './config';

export type { LogLevel } from './config';
/** Where finished lines go instead of stdout/stderr: each line as Powertools would have written it. */
export type LogWriter = (line: string) => void;

/**
 * Powertools' Logger, with the one thing it has no option for: sending its lines somewhere
 * other than the Console it makes over stdout and stderr (the local stack's pretty printer, a
 * test that reads what was logged). The line is still made by Powertools: its formatter, its
 * omission of empty keys, its JSON replacer (errors, bigints, cycles).
 */
export class Logger extends PowertoolsLogger {
  #writer: LogWriter | undefined;

  /** Sends lines to `writer` (undefined: back to stdout/stderr); returns the writer it replaces. */
  setWriter(writer: LogWriter | undefined): LogWriter | undefined {
    const previous = this.#writer;
    this.#writer = writer;
    return previous;
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (!this.#writer) return super.printLog(logLevel, log);
    log.prepareForPrint();
    this.#writer(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
  }
}

/**
 * The one logger of a process: service and level from POWERTOOLS_SERVICE_NAME and
 * POWERTOOLS_LOG_LEVEL (checked by shared/config.ts).
 */
export const logger = new Logger(loggingFromEnv());

/**
 * A Lambda entry whose every line carries its invocation (function, request id, cold start):
 * Powertools' `addContext` at the start of each invocation, as its middy middleware does. Where
 * invocations overlap in one process (the local stack, Lambda Managed Instances), Powertools
 * keeps the context per invocation in Lambda's InvokeStore (lib/local/invocations.ts).
 * The context is optional only for tests that call a handler with its event alone.
 */
export function withLambdaContext<E, R>(
  handler: (event: E, context?: Context) => Promise<R>,
): (event: E, context?: Context) => Promise<R> {
  return (event, context) => {
    if (context) logger.addContext(context);
    return handler(event, context);
  };
}
