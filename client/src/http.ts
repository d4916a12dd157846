/**
 * The typed openapi-fetch client every resource calls, routed through the retrying transport, and
 * the two things each call needs: its per-call options and, on writes the document marks with an
 * `Idempotency-Key` header parameter, a key (typed by the generated `paths`, so a method can only
 * send one where the document accepts it).
 */
import createClient, { type Client } from 'openapi-fetch';
import { errorFromResponse } from './errors.js';
import type { Page } from './pagination.js';
import type { paths } from './schema.js';
import { type RequestOptions, send, type TransportConfig } from './transport.js';

export interface IdempotentRequestOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`, the same on every retry; one is generated when omitted. Pass your own
   * (1 to 255 printable ASCII characters) to make a write safe to repeat across restarts of your app.
   */
  idempotencyKey?: string;
}

export class Http {
  readonly api: Client<paths>;

  constructor(
    readonly config: TransportConfig,
    baseUrl: string,
    apiKey: string,
  ) {
    this.api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
  }

  /** The openapi-fetch options that send one call through the transport with the caller's options. */
  via(options: RequestOptions = {}): { fetch: (request: Request) => Promise<Response> } {
    return { fetch: (request) => send(request, this.config, options) };
  }

  /** A fresh key per call (not per attempt): the transport sends the same Request on every retry. */
  idempotency(options: IdempotentRequestOptions = {}): { 'Idempotency-Key': string } {
    return { 'Idempotency-Key': options.idempotencyKey ?? globalThis.crypto.randomUUID() };
  }
}

/** The answer's data, or the error its status and body stand for. */
export async function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(
  reply: Promise<R>,
): Promise<Exclude<R['data'], undefined>> {
  const { data, error, response } = await reply;
  if (!response.ok) throw errorFromResponse(response.status, error, response.headers);
  return data as Exclude<R['data'], undefined>;
}

/** A later page's query: the same filters with its cursor, since a cursor is bound to the filters that made it. */
export function pageQuery<Q extends { cursor?: string }>(params: Q, cursor: string | undefined): Q {
  return cursor === undefined ? params : { ...params, cursor };
}

/** For lists the API returns whole (no `cursor` parameter): a next page would repeat the first forever. */
export function wholeList<P extends Page<unknown>>(
  fetchAll: () => Promise<P>,
): (cursor: string | undefined) => Promise<P> {
  return (cursor) => {
    if (cursor !== undefined) return Promise.reject(new Error('this list comes whole and takes no cursor'));
    return fetchAll();
  };
}
