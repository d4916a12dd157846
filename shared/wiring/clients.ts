import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import type { Config } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { secretCipher } from '../secrets/cipher';
import type { Dynamo } from '../store/client';
import { memo } from './memo';

/**
 * The AWS SDK clients of a process: one of each per config (so one per Lambda container),
 * each built the first time a part of the wiring needs it, so a function that never sends
 * an email never constructs (nor, bundled, carries) the SES client. The SDK does the rest:
 * endpoints (FIPS, dual-stack, AWS_ENDPOINT_URL_*, every partition), the credential chain,
 * its standard retry with its quota (AWS_MAX_ATTEMPTS, AWS_RETRY_MODE), clock-skew
 * correction, the X-Amzn-Trace-Id header under Lambda, and request ids on every error.
 */

/**
 * A stalled connection is given up on and retried by the SDK instead of waiting out the
 * invocation (the SDK sets no bound of its own). AWS answers in milliseconds; the local
 * emulators on a loaded test machine can take seconds, and a request waiting for one of the
 * agent's 50 sockets counts against its connection bound. A local emulator never drops a
 * request: there a timeout only sends it again behind the queue it waited in, so the bound is
 * generous.
 */
const TIMEOUTS_MS = {
  aws: { connectionTimeout: 2_000, requestTimeout: 3_000 },
  local: { connectionTimeout: 10_000, requestTimeout: 30_000 },
} as const;
/** Without it the handler only logs a request past its `requestTimeout` and keeps waiting. */
const BOUNDED = { throwOnRequestTimeout: true } as const;

/**
 * What every client of a config shares: its region, and on the local stack fixed credentials (its
 * emulators ignore them, but the SDK signs).
 */
function base(config: Config) {
  const local = config.table.endpoint !== undefined;
  return {
    region: config.table.region,
    ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    requestHandler: { ...(local ? TIMEOUTS_MS.local : TIMEOUTS_MS.aws), ...BOUNDED },
  };
}

/** The table's document client, shared by every store a process builds from this config. */
export function dynamoOf(config: Config): Dynamo {
  return memo(config, dynamoOf, () => {
    const client = new DynamoDBClient({
      ...base(config),
      ...(config.table.endpoint ? { endpoint: config.table.endpoint } : {}),
    });
    // As the stores write them: undefined fields are left out; class instances are never items.
    const doc = DynamoDBDocument.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
    return { doc, client, tableName: config.table.tableName };
  });
}

/**
 * The SQS client of the delivery and owner-email queues; on the local stack, the emulator that
 * serves them. Requests go to the endpoint the SDK resolves (FIPS, dual-stack, AWS_ENDPOINT_URL_SQS),
 * not to the host in the queue URL, which names the plain regional endpoint.
 */
export function sqsOf(config: Config): SQSClient {
  const local = config.table.endpoint ? { endpoint: new URL(config.queueUrl).origin } : {};
  return memo(config, sqsOf, () => new SQSClient({ ...base(config), ...local, useQueueUrlAsEndpoint: false }));
}

export function schedulerOf(config: Config): SchedulerClient {
  return memo(config, schedulerOf, () => new SchedulerClient(base(config)));
}

export function sesOf(config: Config): SESv2Client {
  return memo(config, sesOf, () => new SESv2Client(base(config)));
}

export function kmsOf(config: Config): KMSClient {
  return memo(config, kmsOf, () => new KMSClient(base(config)));
}

/** One cipher per config: KMS data keys are cached inside it, so a delivery costs no KMS call. */
export function cipherOf(config: Config): SecretCipher {
  return memo(config, cipherOf, () => secretCipher(config.secrets, () => kmsOf(config)));
}
