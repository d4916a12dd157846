import { logger } from '../../shared/logger';
import { stage } from './instrument';

/**
 * What the handlers of each stage would send to CloudWatch Logs: their log lines and the
 * metrics' Embedded Metric Format lines, in bytes, by the `stage` they were written in, each
 * line with the 26 bytes CloudWatch Logs bills per event. The lines are counted and not
 * printed (the benchmark's own output stays readable); errors still go to stderr.
 */
export interface LogTally {
  bytes: number;
  lines: number;
}

/** CloudWatch Logs bills each log event's message plus 26 bytes. */
export const CLOUDWATCH_EVENT_OVERHEAD_BYTES = 26;

export const logTallies = new Map<string, LogTally>();

function count(line: string): void {
  const name = stage.getStore();
  if (name === undefined) return;
  const tally = logTallies.get(name) ?? { bytes: 0, lines: 0 };
  tally.bytes += Buffer.byteLength(line) + CLOUDWATCH_EVENT_OVERHEAD_BYTES;
  tally.lines += 1;
  logTallies.set(name, tally);
}

const isError = (line: string) => /"level":"(ERROR|CRITICAL)"/.test(line);

/** From now on: logger lines and EMF lines written on stdout are counted by stage, not printed. */
export function countLogBytes(): void {
  logger.setWriter((line) => {
    count(line);
    if (isError(line)) process.stderr.write(`${line}\n`);
  });
  // Powertools Metrics writes its EMF lines on its own Console over stdout.
  const write = process.stdout.write.bind(process.stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : null;
    if (text !== null && text.startsWith('{"_aws"')) {
      for (const line of text.split('\n').filter(Boolean)) count(line);
      return true;
    }
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
}

/** Zeroes the tallies (the measured window starts). */
export function resetLogBytes(): void {
  logTallies.clear();
}
