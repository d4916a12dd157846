import type { Logger } from '../../shared/logger';

/**
 * Readable logs for a person watching `npm start` in a terminal: one coloured line per log
 * entry instead of a JSON object. Lambda and piped output keep the JSON lines (bin/local.ts
 * installs this only when stdout is a TTY).
 */

const LEVEL_COLOURS: Record<string, string> = { DEBUG: '90', INFO: '36', WARN: '33', ERROR: '31', CRITICAL: '35' };
/** Fields every entry has, or that say nothing locally. */
const NOISE = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_request_id',
]);

export interface PrettyOptions {
  colour: boolean;
}

function value(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

type Entry = Record<string, unknown>;
type Paint = (code: string, text: string) => string;

/**
 * One log entry (a JSON line of Powertools' Logger) as a line of text; anything that is not JSON is
 * returned as it is.
 */
export function prettyLine(json: string, { colour }: PrettyOptions): string {
  let entry: Entry;
  try {
    entry = JSON.parse(json) as Entry;
  } catch {
    return json;
  }
  if (typeof entry !== 'object' || entry === null) return json;
  const paint: Paint = (code, text) => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const level = String(entry.level ?? 'INFO');
  const time = typeof entry.timestamp === 'string' ? entry.timestamp.slice(11, 23) : '';
  const text = entry.message === 'request' ? accessLine(entry, paint) : messageLine(entry, level, paint);
  return `${paint('90', time)} ${paint(LEVEL_COLOURS[level] ?? '0', level.padEnd(5))} ${text}`;
}

const fieldsOf = (entry: Entry) => Object.entries(entry).filter(([k]) => !NOISE.has(k));

/** The access line: method, path, status and duration first, then who asked. */
function accessLine(entry: Entry, paint: Paint): string {
  const status = Number(entry.status);
  const statusText = paint(status >= 500 ? '31' : status >= 400 ? '33' : '32', String(entry.status));
  const who = ['request_id', 'shop_id', 'key_id'].map((k) => entry[k]).filter((v) => typeof v === 'string');
  const shown = new Set(['method', 'path', 'status', 'duration_ms', 'request_id', 'shop_id', 'key_id']);
  const rest = fieldsOf(entry)
    .filter(([k]) => !shown.has(k))
    .map(([k, v]) => `${k}=${value(v)}`);
  return [
    `${String(entry.method)} ${String(entry.path)}`,
    statusText,
    `${String(entry.duration_ms)} ms`,
    paint('90', [...who, ...rest].join(' ')),
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * Any other entry: its message, its error, its fields. Powertools writes an Error as an object
 * { name, location, message, stack }; a string `error` is an ordinary field.
 */
function messageLine(entry: Entry, level: string, paint: Paint): string {
  const error =
    typeof entry.error === 'object' && entry.error !== null
      ? (entry.error as { name?: string; message?: string; stack?: string })
      : undefined;
  const rest = fieldsOf(entry)
    .filter(([k]) => !(k === 'error' && error))
    .map(([k, v]) => `${k}=${value(v)}`);
  const errorText = error ? ` ${paint('31', `${error.name ?? 'Error'}: ${error.message ?? ''}`)}` : '';
  const text = `${String(entry.message)}${errorText} ${paint('90', rest.join(' '))}`.trimEnd();
  if (error?.stack && (level === 'ERROR' || level === 'CRITICAL'))
    return `${text}\n${paint('90', error.stack.split('\n').slice(1).join('\n'))}`;
  return text;
}

/** Makes `logger` print pretty lines instead of its JSON, every level to stdout (`write`). */
export function installPrettyLogs(
  logger: Logger,
  options: PrettyOptions,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): void {
  logger.setWriter((line) => write(prettyLine(line, options)));
}
