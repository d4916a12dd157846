import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { AwsApi, SQS, type AwsIdentity } from '../aws/aws-call';
import type { Config } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { secretCipher } from '../secrets/cipher';
import { dynamo, type Dynamo } from '../store/client';
import { memo } from './memo';

/** The table's client, shared by every store a process builds from this config. */
export function dynamoOf(config: Config): Dynamo {
  return memo(config, dynamoOf, () => dynamo(config.table, identityOf(config)));
}

/**
 * Region and credentials of every AWS call of a process (shared/aws/aws-call.ts), as the SDK
 * clients found them: the table's region, and DynamoDB Local's fixed credentials when the
 * config names its endpoint, else the SDK's default chain (in a Lambda bundle only its first
 * link, the environment: shared/aws/lambda-credentials.ts), made once so it is resolved once
 * (it caches what it found until it expires).
 */
export function identityOf(config: Config): AwsIdentity {
  return memo(config, identityOf, () => {
    const { region, endpoint } = config.table;
    const local = { accessKeyId: 'local', secretAccessKey: 'local' };
    return { region: () => Promise.resolve(region), credentials: endpoint ? () => Promise.resolve(local) : defaultProvider() };
  });
}

/** The SQS API, shared by the delivery and owner-email queues a process sends to. */
export function sqsOf(config: Config): AwsApi {
  return memo(config, sqsOf, () => new AwsApi(SQS, identityOf(config)));
}

/** One cipher per config: KMS data keys are cached inside it, so a delivery costs no KMS call. */
export function cipherOf(config: Config): SecretCipher {
  return memo(config, cipherOf, () => secretCipher(config.secrets, () => identityOf(config)));
}
