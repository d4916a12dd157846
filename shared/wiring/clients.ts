import { AwsApi, SQS, type AwsIdentity } from '../aws/aws-call';
import type { Config } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { secretCipher } from '../secrets/cipher';
import { dynamo, type Dynamo } from '../store/client';
import { memo } from './memo';

/** The table's client, shared by every store a process builds from this config. */
export function dynamoOf(config: Config): Dynamo {
  return memo(config, dynamoOf, () => dynamo(config.table));
}

/**
 * Region and credentials for the other AWS calls (shared/aws/aws-call.ts): the table
 * client's, resolved once, so no second credential chain is bundled or run.
 */
export function identityOf(config: Config): AwsIdentity {
  return dynamoOf(config).client.config;
}

/** The SQS API, shared by the delivery and owner-email queues a process sends to. */
export function sqsOf(config: Config): AwsApi {
  return memo(config, sqsOf, () => new AwsApi(SQS, identityOf(config)));
}

/** One cipher per config: KMS data keys are cached inside it, so a delivery costs no KMS call. */
export function cipherOf(config: Config): SecretCipher {
  return memo(config, cipherOf, () => secretCipher(config.secrets, () => identityOf(config)));
}
