import { NodeHttpHandler } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { Sha256 } from '../hmac-keys';

/**
 * One signed AWS API request, with the SDK's standard retry (and its retry quota) and a time bound, for every call
 * the functions make: DynamoDB (through shared/store/table-api.ts), SQS SendMessage(Batch), KMS
 * GenerateDataKey and Decrypt, SES v2 SendEmail and Scheduler CreateSchedule. Each SDK client
 * bundles its own protocol, endpoint-rules and middleware code (DynamoDB with its document
 * client about 110 KB, KMS 27 KB, SQS 23 KB, SES v2 60 KB, Scheduler 32 KB minified), and its
 * middleware and serde were the largest CPU item of the delivery consumer; this is the signer,
 * a hash and the SDK's HTTP handler, the answer left as the service's JSON.
 */

/** Where the function's AWS calls get their region and credentials (shared/wiring/clients.ts; an SDK client's resolved `config` has the same shape). */
export interface AwsIdentity {
  region: () => Promise<string>;
  credentials: AwsCredentialIdentityProvider;
}

/** How a service is addressed and spoken to: the facts an SDK client holds in its generated code. */
export interface AwsService {
  /** SigV4 signing name. */
  signingName: string;
  /** First label of the regional endpoint, `https://<prefix>.<region>.amazonaws.com`. */
  endpointPrefix: string;
  protocol: 'awsJson1_0' | 'awsJson1_1' | 'restJson1';
  /** awsJson: the `X-Amz-Target` header is `<targetPrefix>.<operation>`. */
  targetPrefix?: string;
  /** Sent (and signed) with every request. */
  headers?: Record<string, string>;
  /** The SDK's retry defaults for this service's client, when they differ from the standard ones (RETRY). */
  retry?: RetryPolicy;
}

/** Attempts in all, and the bases of the jittered exponential back-off: attempt n+1 waits random × base × 2^(n-1) ms, at most 20 s. */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  throttlingDelayMs: number;
}

/** The standard retry of the SDK clients these calls replaced (@smithy/core's `Retry.v2026`): 3 attempts, 50 ms base, 1 s after throttling. */
const RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 50, throttlingDelayMs: 1_000 };

/**
 * The SDK's retry quota (@smithy/core's StandardRetryStrategy, `Retry.v2026`), per API client
 * as per SDK client: each retry spends tokens (14, 5 after throttling) from a bucket of 500; a
 * call that succeeds gives back what its last retry spent, or 1 if it made none. With the bucket
 * empty a failure is not retried: when a service is down, retries stop adding to its load
 * instead of multiplying every caller's requests by the attempts.
 */
export const RETRY_QUOTA = { capacity: 500, cost: 14, throttlingCost: 5, noRetryIncrement: 1 } as const;

export const SQS: AwsService = {
  signingName: 'sqs',
  endpointPrefix: 'sqs',
  protocol: 'awsJson1_0',
  targetPrefix: 'AmazonSQS',
  // As the SDK sends it: SQS then names errors by their Query-protocol code too (x-amzn-query-error).
  headers: { 'x-amzn-query-mode': 'true' },
};
export const KMS: AwsService = { signingName: 'kms', endpointPrefix: 'kms', protocol: 'awsJson1_1', targetPrefix: 'TrentService' };
export const SES_V2: AwsService = { signingName: 'ses', endpointPrefix: 'email', protocol: 'restJson1' };
export const SCHEDULER: AwsService = { signingName: 'scheduler', endpointPrefix: 'scheduler', protocol: 'restJson1' };
/**
 * DynamoDB, retried as @aws-sdk/client-dynamodb 3.1162 does by default (its runtime config,
 * with @smithy/core's `Retry.v2026`): 4 attempts, 25 ms base, 1 s after throttling.
 * TransactionConflictException is not retried (the SDK does not either: shared/store/client.ts
 * `retryConflicts` does, for single-item writes).
 */
export const DYNAMODB: AwsService = {
  signingName: 'dynamodb',
  endpointPrefix: 'dynamodb',
  protocol: 'awsJson1_0',
  targetPrefix: 'DynamoDB_20120810',
  retry: { attempts: 4, baseDelayMs: 25, throttlingDelayMs: 1_000 },
};

export interface AwsRequest {
  /** awsJson: the operation named in `X-Amz-Target`; restJson1: a name for error messages. */
  operation: string;
  input: object;
  /** restJson1: the path the input is POSTed to. awsJson always POSTs to `/`. */
  path?: string;
  /** This request's endpoint when the API has no override (SQS: the queue URL's origin, as the SDK does). */
  endpoint?: string;
  /**
   * Ends the call when it aborts (the SDK's `abortSignal`): the attempt in flight is cut off, no
   * other is made, and the call rejects at once with an error named `AbortError`.
   */
  signal?: AbortSignal;
  /** Bound on each attempt of this call instead of the API's (`AwsApiOptions.timeoutMs`): a long poll's, which waits longer by design. */
  timeoutMs?: number;
}

export interface AwsApiOptions {
  /** Tests and local stand-ins; otherwise the request's, else the regional endpoint. */
  endpoint?: string;
  /** Bound on each attempt, connection to last byte (default 5 s; a request may set its own). The SDK clients have none. */
  timeoutMs?: number;
  /** Back-off between attempts (tests pass one that does not wait). */
  pause?: (ms: number) => Promise<void>;
}

/**
 * An error answer of the API, named by its error type exactly as the SDK names its exception
 * classes, with the other fields of the error body as the SDK's exception has them, as sent
 * (DynamoDB: a refused condition's `Item`, a cancelled transaction's `CancellationReasons`,
 * both marshalled, as the SDK leaves them).
 */
export class AwsServiceError extends Error {
  readonly $metadata: { httpStatusCode: number };
  [field: string]: unknown;
  constructor(
    name: string,
    message: string,
    readonly status: number,
    /** SQS's Query-protocol error code (`x-amzn-query-error`), which the SDK exposes as `Code`. */
    readonly Code?: string,
    body: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
    for (const [field, value] of Object.entries(body)) {
      // The type and message are read above; a field that would shadow the error's own is not the SDK's either.
      if (field !== '__type' && field !== 'code' && field !== 'message' && field !== 'Message' && !(field in this)) this[field] = value;
    }
  }
}

const TIMEOUT_MS = 5_000;
// The SDK's standard retry (@smithy/core/retry): throttling and transient names, 429 and 500/502/503/504, network failures.
const THROTTLING = new Set([
  'BandwidthLimitExceeded', 'EC2ThrottledException', 'LimitExceededException', 'PriorRequestNotComplete', 'ProvisionedThroughputExceededException',
  'RequestLimitExceeded', 'RequestThrottled', 'RequestThrottledException', 'SlowDown', 'ThrottledException', 'Throttling', 'ThrottlingException',
  'TooManyRequestsException', 'TransactionInProgressException',
]);
const TRANSIENT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
/** Server errors the SDK retries; others (501, 505, ...) it does not. */
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
const NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** What a call rejects with once its signal aborted (named as the SDK's HTTP handler names it), never retried. */
function abortError(service: AwsService, request: AwsRequest): Error {
  return Object.assign(new Error(`${service.signingName} ${request.operation}: aborted`), { name: 'AbortError', cause: request.signal?.reason });
}

/** `promise`, or an AbortError as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, aborted: () => Error): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function retryable(err: unknown): boolean {
  if (err instanceof AwsServiceError) return TRANSIENT_STATUS.has(err.status) || err.status === 429 || THROTTLING.has(err.name) || TRANSIENT.has(err.name);
  const e = err as { name?: string; code?: string };
  return TRANSIENT.has(e.name ?? '') || NETWORK.has(e.code ?? '');
}

/** The SDK's rule: the header, else the body's `code`, else its `__type`; the part after `#` and before `:`. */
function errorName(header: string | undefined, body: { code?: unknown; __type?: unknown }, status: number): string {
  const raw = header ?? (typeof body.code === 'string' ? body.code : undefined) ?? (typeof body.__type === 'string' ? body.__type : undefined);
  if (!raw) return `HTTP${status}`;
  return (raw.split(',')[0] as string).split(':')[0]?.split('#').pop() || `HTTP${status}`;
}

/** Where the SDK sends a request with no custom endpoint (standard partition; China under amazonaws.com.cn). */
export function regionalEndpoint(service: AwsService, region: string): string {
  return `https://${service.endpointPrefix}.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;
}

/** One service's API: `call` signs, sends, retries and parses; answers are the service's JSON as is. */
export class AwsApi {
  private readonly signer: SignatureV4;
  private handler: NodeHttpHandler | undefined;
  /** Tokens left for retries (RETRY_QUOTA). */
  private retryTokens: number = RETRY_QUOTA.capacity;

  constructor(
    readonly service: AwsService,
    private readonly identity: AwsIdentity,
    private readonly options: AwsApiOptions = {},
  ) {
    this.signer = new SignatureV4({ service: service.signingName, region: identity.region, credentials: identity.credentials, sha256: Sha256, uriEscapePath: true });
  }

  async call<T = Record<string, unknown>>(request: AwsRequest): Promise<T> {
    const base = new URL(this.options.endpoint ?? request.endpoint ?? regionalEndpoint(this.service, await this.identity.region()));
    // Serialised once: every attempt sends the same bytes (and the same idempotency token, where the input has one).
    const body = JSON.stringify(request.input);
    // The default back-off's timer is cleared on abort, so an aborted call keeps no timer (nor the process) alive.
    const pause =
      this.options.pause ??
      ((ms: number) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          function done() {
            clearTimeout(timer);
            request.signal?.removeEventListener('abort', done);
            resolve();
          }
          request.signal?.addEventListener('abort', done, { once: true });
        }));
    const retry = this.service.retry ?? RETRY;
    const aborted = () => abortError(this.service, request);
    // What this call's last retry took from the quota: given back if it succeeds.
    let lastCost = 0;
    for (let attempt = 1; ; attempt++) {
      if (request.signal?.aborted) throw aborted();
      try {
        const answer = (await this.send(base, request, body)) as T;
        this.retryTokens = Math.min(RETRY_QUOTA.capacity, this.retryTokens + (lastCost || RETRY_QUOTA.noRetryIncrement));
        return answer;
      } catch (err) {
        // An aborted call ends here, whatever its last attempt met.
        if (request.signal?.aborted) throw aborted();
        if (attempt >= retry.attempts || !retryable(err)) throw err;
        const throttled = err instanceof AwsServiceError && (err.status === 429 || THROTTLING.has(err.name));
        const cost = throttled ? RETRY_QUOTA.throttlingCost : RETRY_QUOTA.cost;
        if (this.retryTokens < cost) throw err;
        this.retryTokens -= cost;
        lastCost = cost;
        // Jittered exponential back-off, with the SDK's longer base after throttling; an abort cuts it short.
        await abortable(pause(Math.random() * Math.min((throttled ? retry.throttlingDelayMs : retry.baseDelayMs) * 2 ** (attempt - 1), 20_000)), request.signal, aborted);
      }
    }
  }

  /** Closes the kept-alive connections (a process that ends its stack, tests). */
  destroy(): void {
    this.handler?.destroy();
    this.handler = undefined;
  }

  private async send(base: URL, request: AwsRequest, body: string): Promise<unknown> {
    const { protocol, targetPrefix, headers } = this.service;
    const json = protocol !== 'restJson1';
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      path: json ? '/' : (request.path ?? '/'),
      query: {},
      headers: {
        host: base.host,
        'content-type': json ? `application/x-amz-json-${protocol === 'awsJson1_0' ? '1.0' : '1.1'}` : 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        ...(json ? { 'x-amz-target': `${targetPrefix}.${request.operation}` } : {}),
        ...headers,
      },
      body,
    });
    // The handler the SDK clients use (keep-alive agent), not global fetch, which loads undici on a cold function's first call.
    this.handler ??= new NodeHttpHandler();
    const abort = new AbortController();
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs ?? TIMEOUT_MS;
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    // The caller's abort cuts the attempt off the same way as the bound (call() then names it an abort).
    const cancel = () => abort.abort();
    request.signal?.addEventListener('abort', cancel, { once: true });
    if (request.signal?.aborted) cancel();
    let status: number;
    let answer: Record<string, string>;
    let text: string;
    try {
      const { response } = await this.handler.handle(signed as Parameters<NodeHttpHandler['handle']>[0], { abortSignal: abort.signal });
      ({ statusCode: status, headers: answer } = response);
      text = await readBody(response.body as AsyncIterable<Buffer> & { destroy(): void }, abort.signal);
    } catch (err) {
      if (request.signal?.aborted) throw abortError(this.service, request);
      // Bounded like any request of a function's: a stalled connection is retried, not waited on for the whole invocation.
      if (abort.signal.aborted) throw Object.assign(new Error(`${this.service.signingName} ${request.operation}: no answer within ${timeoutMs} ms`), { name: 'TimeoutError' });
      throw err;
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', cancel);
    }

    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // Not JSON (a proxy's error page): the status says enough.
      if (status < 300) throw new Error(`${this.service.signingName} ${request.operation}: answer is not JSON`);
    }
    if (status >= 200 && status < 300) return parsed;
    const message = typeof parsed.message === 'string' ? parsed.message : typeof parsed.Message === 'string' ? parsed.Message : `${this.service.signingName} ${request.operation} answered ${status}`;
    const queryCode = answer['x-amzn-query-error']?.split(';')[0];
    throw new AwsServiceError(errorName(answer['x-amzn-errortype'], parsed, status), message, status, queryCode, parsed);
  }
}

/** The whole answer body; the time bound covers it too (a server may stall after its headers). */
async function readBody(body: AsyncIterable<Buffer> & { destroy(): void }, signal: AbortSignal): Promise<string> {
  const stop = () => body.destroy();
  signal.addEventListener('abort', stop, { once: true });
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk);
    if (signal.aborted) throw new Error('aborted');
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
