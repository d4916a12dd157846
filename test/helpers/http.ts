import { validateResponse } from './openapi-validator';

export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

/** fetch against the local stack, returning the parsed JSON body as well as the raw text. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpReply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  const json = JSON.parse(text) as Record<string, unknown>; // every answer of the API is JSON
  // Every response any e2e test receives must match the published OpenAPI document.
  validateResponse(method, path, res.status, json);
  return { status: res.status, headers: res.headers, text, json };
}

/** Asserts the contract's error body and returns its `error` object. */
export function expectError(reply: HttpReply, status: number, code: string): Record<string, unknown> {
  const error = reply.json.error as Record<string, unknown> | undefined;
  if (reply.status !== status || error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${reply.status} ${reply.text}`);
  }
  expect(typeof error.type).toBe('string');
  expect(typeof error.message).toBe('string');
  expect(error.request_id).toBe(reply.headers.get('request-id'));
  return error;
}
