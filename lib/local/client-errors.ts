import { STATUS_CODES } from 'node:http';
import { AppError } from '../../shared/errors';
import type { HttpResult } from '../../shared/http/response';

/** The most of a request line and headers the local adapter parses (node's default, stated so the 431 can say it). */
export const REQUEST_HEAD_BYTES = 16 * 1024;

/**
 * The URL of a request target. An origin-form target is a path, even one that starts with `//`
 * (which `new URL(target, base)` would read as a host); an absolute-form target must parse
 * whole. Null for a target that cannot be read, which the caller answers with a 400.
 */
export function targetUrl(target: string): URL | null {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target);
  } catch {
    return null;
  }
}

export const malformedTarget = (): AppError =>
  new AppError('malformed_request', 'The request target is not a valid path or absolute URL.');

/** What answers a request node's HTTP parser refused (the server's `clientError`), in the contract's error format. */
export function clientErrorOf(err: NodeJS.ErrnoException & { reason?: string }): AppError {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return new AppError('headers_too_large', `The request line and headers exceed ${REQUEST_HEAD_BYTES / 1024} KiB.`);
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new AppError('request_timeout', 'The request did not arrive in time.');
  return new AppError(
    'malformed_request',
    `The request is not valid HTTP/1.1: ${err.reason ?? err.code ?? 'parse error'}.`,
  );
}

/**
 * A response as raw HTTP/1.1, for a socket that has no response object (a request the parser
 * refused). It closes the connection: the rest of what the client sent cannot be framed.
 */
export function rawResponse(result: HttpResult): string {
  const body = result.body ?? '';
  const headers = { ...result.headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
  const head = [
    `HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode] ?? ''}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}
