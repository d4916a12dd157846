import { AwsApi, KMS, type AwsIdentity } from '../aws/aws-call';
import type { SecretsConfig } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { EnvelopeCipher } from './envelope';
import { KmsDataKeys } from './kms-data-keys';
import { LocalKeyFile } from './local-key-file';

/** KMS in the cloud (signed with the function's region and credentials), a key file locally. */
export function secretCipher(config: SecretsConfig, identity: () => AwsIdentity): SecretCipher {
  return new EnvelopeCipher('kmsKeyId' in config ? new KmsDataKeys(new AwsApi(KMS, identity()), config.kmsKeyId) : new LocalKeyFile(config.keyFile));
}
