/**
 * Lambda's own lines for one invocation, as its JSON log format writes them to CloudWatch Logs
 * when the function's system log level is INFO (Lambda's default): START, END and REPORT.
 * Their size, with CloudWatch's 26 bytes per event, is what each invocation adds to the logs
 * bill; at WARN (the delivery path's default, lib/constructs/delivery.ts) Lambda writes none.
 */
import { CLOUDWATCH_EVENT_OVERHEAD_BYTES } from './log-bytes';

const requestId = '8f507cfc-0b1a-4697-b07a-ac58fc914c95';
const time = '2026-01-01T00:00:00.000Z';
const SAMPLE_LINES = [
  { time, type: 'platform.start', record: { requestId, version: '$LATEST' } },
  {
    time,
    type: 'platform.runtimeDone',
    record: { requestId, status: 'success', metrics: { durationMs: 19.62, producedBytes: 0 } },
  },
  {
    time,
    type: 'platform.report',
    record: {
      requestId,
      metrics: { durationMs: 19.62, billedDurationMs: 20, memorySizeMB: 256, maxMemoryUsedMB: 96 },
      status: 'success',
    },
  },
];

export const PLATFORM_BYTES_PER_INVOCATION = SAMPLE_LINES.reduce(
  (n, line) => n + Buffer.byteLength(JSON.stringify(line)) + CLOUDWATCH_EVENT_OVERHEAD_BYTES,
  0,
);

/** Bytes of Lambda's own lines per invocation at a system log level. */
export const platformBytesPerInvocation = (systemLogLevel: 'INFO' | 'WARN'): number =>
  systemLogLevel === 'INFO' ? PLATFORM_BYTES_PER_INVOCATION : 0;
