import { randomUUID } from 'node:crypto';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider } from '@smithy/types';

/** The fields of EventBridge Scheduler's CreateSchedule that the retry scheduler sends. */
export interface CreateScheduleInput {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone: string;
  FlexibleTimeWindow: { Mode: 'OFF' };
  ActionAfterCompletion: 'DELETE';
  Target: {
    Arn: string;
    RoleArn: string;
    Input: string;
    RetryPolicy: { MaximumRetryAttempts: number; MaximumEventAgeInSeconds: number };
    DeadLetterConfig: { Arn: string };
  };
}

/** Creates one-time schedules; a name that exists already is an error named `ConflictException`. */
export interface ScheduleApi {
  create(input: CreateScheduleInput): Promise<void>;
}

/** Where the function's AWS clients get their region and credentials (any client's resolved `config`). */
export interface AwsIdentity {
  region: () => Promise<string>;
  credentials: AwsCredentialIdentityProvider;
}

const ATTEMPTS = 3;
const REQUEST_TIMEOUT_MS = 5_000;
const RETRYABLE = new Set(['ThrottlingException', 'TooManyRequestsException', 'ServiceQuotaExceededException', 'InternalServerException']);

/** An error answer of the API, named by its error type as the SDK names its exceptions. */
class SchedulerError extends Error {
  constructor(
    name: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = name;
  }
}

/**
 * CreateSchedule as one signed HTTPS request (REST-JSON, SigV4 service `scheduler`), with the
 * SDK's standard retry (3 attempts on throttling, 5xx and network errors, jittered back-off)
 * and its idempotency token. Instead of `@aws-sdk/client-scheduler`: the consumer needs this
 * one call, only for retries more than 15 minutes out, and the client with its REST protocol
 * code is 32 KB of the consumer's bundle. Signing uses the signer and hash the other clients
 * already bundle, with their region and credentials.
 */
export class HttpScheduleApi implements ScheduleApi {
  private signer: SignatureV4 | undefined;

  constructor(
    private readonly identity: AwsIdentity,
    /** Tests point it at a local server; in AWS the regional endpoint. */
    private readonly endpoint?: string,
    private readonly pause: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  async create(input: CreateScheduleInput): Promise<void> {
    const { Name, ...fields } = input;
    const region = await this.identity.region();
    const base = new URL(this.endpoint ?? `https://scheduler.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`);
    const path = `/schedules/${encodeURIComponent(Name)}`;
    // One token for every attempt: a retry of a create that did land is not a second schedule.
    const body = JSON.stringify({ ...fields, ClientToken: randomUUID() });
    this.signer ??= new SignatureV4({ service: 'scheduler', region, credentials: this.identity.credentials, sha256: Sha256, uriEscapePath: true });

    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(base, path, body);
      } catch (err) {
        const retryable = err instanceof SchedulerError ? err.status >= 500 || err.status === 429 || RETRYABLE.has(err.name) : true;
        if (!retryable || attempt >= ATTEMPTS) throw err;
        await this.pause(Math.random() * 100 * 2 ** attempt);
      }
    }
  }

  private async send(base: URL, path: string, body: string): Promise<void> {
    const signed = await (this.signer as SignatureV4).sign({
      method: 'POST',
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      path,
      query: {},
      headers: { host: base.host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    // Bounded like any request of the consumer's: a stalled connection is retried, not waited on for the whole invocation.
    const res = await fetch(new URL(path, base), { method: 'POST', headers: signed.headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    if (res.ok) return;
    let parsed: { __type?: string; message?: string; Message?: string } = {};
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      // Not JSON (a proxy's error page): the status says enough.
    }
    const type = (res.headers.get('x-amzn-errortype') ?? parsed.__type ?? `HTTP${res.status}`).split(':')[0]?.split('#').pop() ?? 'SchedulerError';
    throw new SchedulerError(type, parsed.message ?? parsed.Message ?? `EventBridge Scheduler answered ${res.status}`, res.status);
  }
}
